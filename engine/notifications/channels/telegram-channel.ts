import type { Logger } from '../../../runtime/logger.ts';
import type { TelegramSettings } from '../notification-config.ts';
import type { ChannelAddress, ChannelResult, ChannelSender } from './channel.ts';
import { excerpt, httpAttempt, retryAfterMs } from './http-attempt.ts';

/** The Bot API's limit on one message's text. */
const MAX_TEXT = 4096;

/** The Bot API's answer: `{ok: true, result}` or `{ok: false, error_code, description, parameters: {retry_after}}`. */
interface BotAnswer {
  ok?: boolean;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number };
}

/**
 * Telegram messages through the Bot API's sendMessage: the short text and the link, without a link
 * preview. The bot token is in every request's path, so no URL is ever logged or put in an error.
 */
export function createTelegramChannel(settings: TelegramSettings, options: { timeoutMs: number; log: Logger }): ChannelSender {
  const endpoint = `${settings.apiUrl}/bot${settings.token}/sendMessage`;
  const hideToken = (text: string) => text.split(settings.token).join('<token>');
  return {
    channel: 'telegram',
    async send(address: ChannelAddress, message): Promise<ChannelResult> {
      if (!address.telegramChatId) return { outcome: 'failed', error: 'no Telegram chat id set' };
      const text = (message.short + (message.url ? `\n${message.url}` : '')).slice(0, MAX_TEXT);
      const attempt = await httpAttempt(
        endpoint,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'user-agent': 'fleetcore-notifications/1' },
          body: JSON.stringify({ chat_id: address.telegramChatId, text, disable_web_page_preview: true }),
        },
        options.timeoutMs,
      );
      if (!attempt.answered) return { outcome: 'retry', error: hideToken(`Telegram: ${attempt.error}`) };
      const answer = parseAnswer(attempt.body);
      if (attempt.status >= 200 && attempt.status < 300 && answer?.ok) return { outcome: 'sent' };
      const code = answer?.error_code ?? attempt.status;
      const error = hideToken(`Telegram answered ${code}: ${answer?.description ?? (excerpt(attempt.body) || 'no description')}`);
      if (code === 429) {
        const seconds = answer?.parameters?.retry_after;
        const wait = typeof seconds === 'number' && seconds >= 0 ? seconds * 1000 : retryAfterMs(attempt.headers.get('retry-after'));
        return wait === undefined ? { outcome: 'retry', error } : { outcome: 'retry', error, retryAfterMs: wait };
      }
      if (code >= 500 || attempt.status >= 500) return { outcome: 'retry', error };
      // 401 and 404 are the bot's own token refused: every message fails until the operator fixes it.
      if (code === 401 || code === 404) options.log.error('Telegram refused the bot token (TELEGRAM_BOT_TOKEN)', { status: code });
      return { outcome: 'failed', error };
    },
    async close() {},
  };
}

function parseAnswer(body: string): BotAnswer | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return value && typeof value === 'object' ? (value as BotAnswer) : undefined;
  } catch {
    return undefined;
  }
}
