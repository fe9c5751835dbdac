import type { NotificationChannel } from '../../../domain/notifications/notification-rule.ts';
import type { Logger } from '../../../runtime/logger.ts';
import type { NotificationConfig } from '../notification-config.ts';
import type { ChannelSender } from './channel.ts';
import { createEmailChannel } from './email-channel.ts';
import { createSmsChannel } from './sms-channel.ts';
import { createTelegramChannel } from './telegram-channel.ts';
import { createWebPushChannel } from './web-push-channel.ts';

/** The channels this server is configured for; a channel left unset has no sender. */
export function createChannels(config: NotificationConfig, log: Logger): Partial<Record<NotificationChannel, ChannelSender>> {
  const { timeoutMs, concurrency } = config;
  const channels: Partial<Record<NotificationChannel, ChannelSender>> = {};
  if (config.email) channels.email = createEmailChannel(config.email, { timeoutMs, concurrency, log: log.child({ channel: 'email' }) });
  if (config.push) channels.push = createWebPushChannel(config.push, { timeoutMs, log: log.child({ channel: 'push' }) });
  if (config.telegram) channels.telegram = createTelegramChannel(config.telegram, { timeoutMs, log: log.child({ channel: 'telegram' }) });
  if (config.sms) channels.sms = createSmsChannel(config.sms, { timeoutMs, log: log.child({ channel: 'sms' }) });
  return channels;
}
