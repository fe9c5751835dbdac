/**
 * Notifications as configured for this server (cli/notification-config.ts reads them from the
 * environment). A channel left unset is off: its deliveries fail with "not configured on this server".
 */
export interface NotificationConfig {
  /** SMTP_URL, SMTP_FROM, SMTP_REQUIRE_TLS. */
  email?: EmailSettings;
  /** VAPID_PUBLIC_KEY, VAPID_PRIVATE_KEY, VAPID_SUBJECT; allowPrivate is WEBHOOK_ALLOW_PRIVATE. */
  push?: PushSettings;
  /** TELEGRAM_BOT_TOKEN, TELEGRAM_API_URL. */
  telegram?: TelegramSettings;
  /** SMS_URL, SMS_BODY, SMS_CONTENT_TYPE, SMS_AUTHORIZATION. */
  sms?: SmsSettings;
  /** NOTIFICATION_RETRY_S: the waits before the 2nd, 3rd, ... attempt; a delivery fails after the last. */
  retryDelaysMs: number[];
  /** NOTIFICATION_TIMEOUT_MS: one attempt's budget (connect, send, answer). */
  timeoutMs: number;
  /** NOTIFICATION_CONCURRENCY: attempts in flight at once per channel, per process. */
  concurrency: number;
  /** NOTIFICATION_DELIVERY_RETENTION_DAYS, in ms: finished deliveries are kept this long. */
  deliveryRetentionMs: number;
  /** REPORT_CHECK_S, in ms: how often report subscriptions are checked for a due run. */
  reportCheckMs: number;
}

export interface EmailSettings {
  /** smtp://[user:pass@]host[:port] (STARTTLS when offered) or smtps:// (TLS from the start). */
  url: string;
  /** The From header: `fleet@example.com` or `Fleet <fleet@example.com>`. */
  from: string;
  /** Refuse to send over smtp:// unless the server offers STARTTLS. */
  requireTls: boolean;
}

export interface PushSettings {
  /** The VAPID key pair, base64url: the public key as the uncompressed P-256 point (65 bytes), the private one as 32 bytes. */
  publicKey: string;
  privateKey: string;
  /** mailto: or https: — how a push service reaches the operator. */
  subject: string;
  /** Let push endpoints be http:// and private or loopback addresses (tests, closed networks). */
  allowPrivate: boolean;
}

export interface TelegramSettings {
  token: string;
  /** The Bot API's base URL, without a trailing slash. */
  apiUrl: string;
}

export interface SmsSettings {
  /** The gateway's URL with {phone} and {message} placeholders (URL-encoded when replaced). */
  url: string;
  /** When given, POSTed with the placeholders escaped for contentType; else the URL is fetched with GET. */
  body?: string;
  contentType: string;
  /** The Authorization header's value, if the gateway wants one. */
  authorization?: string;
}
