import type { Logger } from '../../../runtime/logger.ts';
import type { SmsSettings } from '../notification-config.ts';
import type { ChannelAddress, ChannelResult, ChannelSender } from './channel.ts';
import { excerpt, httpAttempt, retryAfterMs } from './http-attempt.ts';

export const SMS_DEFAULT_CONTENT_TYPE = 'application/x-www-form-urlencoded';
/** The SMS_BODY types whose escaping is known: placeholders are escaped for them, or (text/plain) put in as they are. */
export const SMS_CONTENT_TYPES = ['application/json', SMS_DEFAULT_CONTENT_TYPE, 'text/plain'] as const;

/** `application/json; charset=utf-8` → `application/json`. */
export function mediaType(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase();
}

/** An SMS is one to a few segments: a longer text is cut rather than billed as ten. */
const MAX_SMS_CHARS = 480;

/**
 * SMS through an HTTP gateway described by a template, as most gateways (and Traccar) are driven:
 * {phone} and {message} in SMS_URL are replaced URL-encoded; with SMS_BODY the body is POSTed with
 * them escaped for its content type, else the URL is fetched with GET.
 */
export function createSmsChannel(settings: SmsSettings, options: { timeoutMs: number; log: Logger }): ChannelSender {
  return {
    channel: 'sms',
    async send(address: ChannelAddress, message): Promise<ChannelResult> {
      if (!address.phone) return { outcome: 'failed', error: 'no phone number set for SMS' };
      const values = { phone: address.phone, message: smsText(message.short) };
      const url = fillTemplate(settings.url, values, encodeURIComponent);
      const headers: Record<string, string> = { 'user-agent': 'fleetcore-notifications/1' };
      if (settings.authorization) headers.authorization = settings.authorization;
      const init: RequestInit = { method: 'GET', headers };
      if (settings.body !== undefined) {
        init.method = 'POST';
        headers['content-type'] = settings.contentType;
        init.body = fillTemplate(settings.body, values, bodyEscape(settings.contentType));
      }
      const attempt = await httpAttempt(url, init, options.timeoutMs);
      if (!attempt.answered) return { outcome: 'retry', error: `SMS gateway: ${attempt.error}` };
      const { status } = attempt;
      if (status >= 200 && status < 300) return { outcome: 'sent' };
      const error = `SMS gateway answered ${status}${attempt.body ? `: ${excerpt(attempt.body)}` : ''}`;
      if (status === 429 || status >= 500) {
        const wait = retryAfterMs(attempt.headers.get('retry-after'));
        return wait === undefined ? { outcome: 'retry', error } : { outcome: 'retry', error, retryAfterMs: wait };
      }
      options.log.warn('SMS gateway refused a message', { status });
      return { outcome: 'failed', error };
    },
    async close() {},
  };
}

function smsText(short: string): string {
  return short.length > MAX_SMS_CHARS ? `${short.slice(0, MAX_SMS_CHARS - 1)}…` : short;
}

/** Replaces every {phone} and {message} at once, so a value holding "{message}" is never replaced again. */
export function fillTemplate(template: string, values: { phone: string; message: string }, escape: (value: string) => string): string {
  return template.replace(/\{(phone|message)\}/g, (_, name: 'phone' | 'message') => escape(values[name]));
}

function bodyEscape(contentType: string): (value: string) => string {
  switch (mediaType(contentType)) {
    // Inside a JSON string: the template holds "text": "{message}".
    case 'application/json':
      return (value) => JSON.stringify(value).slice(1, -1);
    case SMS_DEFAULT_CONTENT_TYPE:
      return (value) => new URLSearchParams({ v: value }).toString().slice(2);
    default:
      return (value) => value;
  }
}
