import type { NotificationMessage } from '../../../domain/notifications/notification-message.ts';
import type { NotificationChannel } from '../../../domain/notifications/notification-rule.ts';

/** Where one recipient gets messages on a channel: the field of that channel is set. */
export interface ChannelAddress {
  email?: string;
  telegramChatId?: string;
  phone?: string;
  /** A browser's Push API subscription. */
  push?: { endpoint: string; p256dh: string; auth: string };
}

/**
 * What one attempt came to: sent; worth retrying (a timeout, a 5xx, a 429 with its wait); or failed
 * for good (refused, misaddressed). `gone`: the address no longer exists (a push subscription the
 * browser dropped), so it is forgotten.
 */
export type ChannelResult =
  | { outcome: 'sent' }
  | { outcome: 'retry'; error: string; retryAfterMs?: number }
  | { outcome: 'failed'; error: string; gone?: boolean };

/** One way of reaching people, configured for this server. */
export interface ChannelSender {
  readonly channel: NotificationChannel;
  send(address: ChannelAddress, message: NotificationMessage): Promise<ChannelResult>;
  close(): Promise<void>;
}
