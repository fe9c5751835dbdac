import { createECDH } from 'node:crypto';
import type {
  EmailSettings,
  NotificationConfig,
  PushSettings,
  SmsSettings,
  TelegramSettings,
} from '../engine/notifications/notification-config.ts';
import { mediaType, SMS_CONTENT_TYPES, SMS_DEFAULT_CONTENT_TYPE } from '../engine/notifications/channels/sms-channel.ts';
import { StartupError } from '../runtime/startup-error.ts';
import { flag, integer, type Env } from './env-values.ts';

export type { NotificationConfig } from '../engine/notifications/notification-config.ts';


const DEFAULT_RETRY_S = [10, 60, 300, 1800, 7200, 21600];
const DEFAULT_TELEGRAM_API_URL = 'https://api.telegram.org';

/**
 * Notification channels and delivery settings from the environment. Each channel is on when its
 * main variable is set and checked now, so a mistake stops the start rather than every delivery.
 * `allowPrivate` is WEBHOOK_ALLOW_PRIVATE: push endpoints are addresses users give, as webhooks are.
 */
export function notificationConfig(env: Env, options: { allowPrivate: boolean }): NotificationConfig {
  const config: NotificationConfig = {
    retryDelaysMs: retryDelays(env),
    timeoutMs: integer(env, 'NOTIFICATION_TIMEOUT_MS', 15_000, 100, 300_000),
    concurrency: integer(env, 'NOTIFICATION_CONCURRENCY', 16, 1, 1000),
    deliveryRetentionMs: integer(env, 'NOTIFICATION_DELIVERY_RETENTION_DAYS', 30, 1, 36500) * 86_400_000,
    reportCheckMs: integer(env, 'REPORT_CHECK_S', 60, 1, 3600) * 1000,
  };
  const email = emailSettings(env);
  const push = pushSettings(env, options.allowPrivate);
  const telegram = telegramSettings(env);
  const sms = smsSettings(env);
  if (email) config.email = email;
  if (push) config.push = push;
  if (telegram) config.telegram = telegram;
  if (sms) config.sms = sms;
  return config;
}

function emailSettings(env: Env): EmailSettings | undefined {
  const url = env.SMTP_URL || undefined;
  if (!url) {
    orphans(env, ['SMTP_FROM', 'SMTP_REQUIRE_TLS'], 'SMTP_URL');
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The URL may carry a password: never echoed.
    throw new StartupError('SMTP_URL is not a valid URL (smtp://user:password@host:587 or smtps://user:password@host:465)');
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') {
    throw new StartupError(`SMTP_URL must start with smtp:// (STARTTLS when the server offers it) or smtps:// (TLS from the start), not ${parsed.protocol}//`);
  }
  if (!parsed.hostname) throw new StartupError('SMTP_URL must name the mail server\'s host');
  const from = env.SMTP_FROM?.trim();
  if (!from) throw new StartupError('SMTP_FROM is required with SMTP_URL: the sender address, e.g. "Fleet <fleet@example.com>"');
  if (!isMailbox(from)) throw new StartupError(`SMTP_FROM must be an email address or "Name <address>", got "${from}"`);
  return { url, from, requireTls: flag(env, 'SMTP_REQUIRE_TLS', false) };
}

/** `a@b.c` or `Display Name <a@b.c>`: one mailbox, as a From header holds. */
function isMailbox(value: string): boolean {
  const address = /^[^<>]*<([^<>]+)>$/.exec(value)?.[1] ?? value;
  return /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/.test(address.trim());
}

function pushSettings(env: Env, allowPrivate: boolean): PushSettings | undefined {
  const publicKey = env.VAPID_PUBLIC_KEY || undefined;
  const privateKey = env.VAPID_PRIVATE_KEY || undefined;
  if (!publicKey && !privateKey) {
    orphans(env, ['VAPID_SUBJECT'], 'VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY');
    return undefined;
  }
  if (!publicKey || !privateKey) {
    throw new StartupError(`${publicKey ? 'VAPID_PUBLIC_KEY' : 'VAPID_PRIVATE_KEY'} is set without ${publicKey ? 'VAPID_PRIVATE_KEY' : 'VAPID_PUBLIC_KEY'}; set both (make a pair with "fleet notifications vapid-keys"), or neither`);
  }
  const publicBytes = base64url('VAPID_PUBLIC_KEY', publicKey);
  if (publicBytes.length !== 65 || publicBytes[0] !== 4) {
    throw new StartupError(`VAPID_PUBLIC_KEY must be an uncompressed P-256 public key (65 bytes, 87 base64url characters), got ${publicBytes.length} bytes`);
  }
  const privateBytes = base64url('VAPID_PRIVATE_KEY', privateKey);
  if (privateBytes.length !== 32) throw new StartupError(`VAPID_PRIVATE_KEY must be a P-256 private key (32 bytes, 43 base64url characters), got ${privateBytes.length} bytes`);
  // A swapped or mismatched pair would sign with one key and announce another: every push service refuses that.
  let derived: Buffer;
  try {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(privateBytes);
    derived = ecdh.getPublicKey();
  } catch {
    throw new StartupError('VAPID_PRIVATE_KEY is not a valid P-256 private key');
  }
  if (!derived.equals(publicBytes)) throw new StartupError('VAPID_PUBLIC_KEY is not the public key of VAPID_PRIVATE_KEY; set the pair "fleet notifications vapid-keys" printed');
  const subject = env.VAPID_SUBJECT?.trim();
  if (!subject) throw new StartupError('VAPID_SUBJECT is required with the VAPID keys: a mailto: or https: address where push services can reach you, e.g. mailto:ops@example.com');
  if (!/^mailto:[^\s@]+@[^\s@]+$/.test(subject)) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(subject);
    } catch {
      parsed = undefined;
    }
    if (parsed?.protocol !== 'https:' || !parsed.hostname) {
      throw new StartupError(`VAPID_SUBJECT must be a mailto: address or an https:// URL, e.g. mailto:ops@example.com, got "${subject}"`);
    }
  }
  return { publicKey, privateKey, subject, allowPrivate };
}

function base64url(name: string, value: string): Buffer {
  if (!/^[A-Za-z0-9_-]+$/.test(value)) throw new StartupError(`${name} must be base64url (A-Z a-z 0-9 - _, without "=" padding)`);
  return Buffer.from(value, 'base64url');
}

function telegramSettings(env: Env): TelegramSettings | undefined {
  const token = env.TELEGRAM_BOT_TOKEN?.trim();
  if (!token) {
    orphans(env, ['TELEGRAM_API_URL'], 'TELEGRAM_BOT_TOKEN');
    return undefined;
  }
  // The token is a secret: the message names its form, never its value.
  if (!/^\d+:[A-Za-z0-9_-]+$/.test(token)) throw new StartupError('TELEGRAM_BOT_TOKEN must be a bot token as @BotFather gives it: digits, a colon, then letters, digits, - and _');
  const apiUrl = httpUrl(env, 'TELEGRAM_API_URL') ?? DEFAULT_TELEGRAM_API_URL;
  return { token, apiUrl: apiUrl.replace(/\/+$/, '') };
}

function smsSettings(env: Env): SmsSettings | undefined {
  const url = httpUrl(env, 'SMS_URL');
  if (!url) {
    orphans(env, ['SMS_BODY', 'SMS_CONTENT_TYPE', 'SMS_AUTHORIZATION'], 'SMS_URL');
    return undefined;
  }
  const body = env.SMS_BODY || undefined;
  const missing = ['{phone}', '{message}'].filter((p) => !url.includes(p) && !body?.includes(p));
  if (missing.length > 0) {
    throw new StartupError(`SMS_URL (or SMS_BODY) must contain ${missing.join(' and ')}, replaced by the recipient's number and the text, e.g. https://sms.example.com/send?to={phone}&text={message}`);
  }
  const contentType = (env.SMS_CONTENT_TYPE || SMS_DEFAULT_CONTENT_TYPE).trim();
  if (!(SMS_CONTENT_TYPES as readonly string[]).includes(mediaType(contentType))) {
    throw new StartupError(`SMS_CONTENT_TYPE must be one of ${SMS_CONTENT_TYPES.join(', ')}, got "${env.SMS_CONTENT_TYPE}"`);
  }
  if (env.SMS_CONTENT_TYPE && !body) throw new StartupError('SMS_CONTENT_TYPE is set without SMS_BODY; it is the type of the body SMS_BODY POSTs');
  const authorization = env.SMS_AUTHORIZATION || undefined;
  if (authorization && /[\r\n]/.test(authorization)) throw new StartupError('SMS_AUTHORIZATION must be one line, e.g. "Bearer <token>" or "Basic <base64>"');
  const settings: SmsSettings = { url, contentType };
  if (body) settings.body = body;
  if (authorization) settings.authorization = authorization;
  return settings;
}

/** An http(s) URL, kept as written: placeholders in its path must survive (the URL parser would encode their braces). */
function httpUrl(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new StartupError(`${name} is not a valid URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new StartupError(`${name} must start with https:// or http://`);
  return raw;
}

function retryDelays(env: Env): number[] {
  const raw = env.NOTIFICATION_RETRY_S?.trim();
  if (!raw) return DEFAULT_RETRY_S.map((s) => s * 1000);
  const parts = raw.split(',').map((part) => part.trim());
  const delays = parts.map(Number);
  if (parts.length > 50 || delays.some((s, i) => parts[i] === '' || !Number.isInteger(s) || s < 1 || s > 7 * 86_400)) {
    throw new StartupError(`NOTIFICATION_RETRY_S must be a comma-separated list of at most 50 waits in seconds, each from 1 to 604800, e.g. 10,60,300, got "${raw}"`);
  }
  return delays.map((s) => s * 1000);
}

/** Settings that mean something only with `main`: set alone, they are most likely a mistake. */
function orphans(env: Env, names: string[], main: string): void {
  const orphan = names.find((name) => env[name]);
  if (orphan) throw new StartupError(`${orphan} is set without ${main}; set ${main} too, or unset ${orphan}`);
}


