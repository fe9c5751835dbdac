import { createECDH } from 'node:crypto';
import webPush from 'web-push';
import { describe, expect, it } from 'vitest';
import { StartupError } from '../runtime/startup-error.ts';
import { runFleet } from '../test/support/fleet-command.ts';
import { notificationConfig } from './notification-config.ts';

type Env = Record<string, string | undefined>;

const keys = webPush.generateVAPIDKeys();
const vapid = { VAPID_PUBLIC_KEY: keys.publicKey, VAPID_PRIVATE_KEY: keys.privateKey, VAPID_SUBJECT: 'mailto:ops@example.com' };

/** The StartupError message `env` gives; fails the test when it throws nothing or something else. */
function startupErrorOf(env: Env): string {
  try {
    notificationConfig(env, { allowPrivate: false });
  } catch (error) {
    expect(error).toBeInstanceOf(StartupError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error(`expected a StartupError for ${JSON.stringify(env)}, nothing was thrown`);
}

describe('notificationConfig', () => {
  it('has every channel off and the delivery defaults', () => {
    expect(notificationConfig({}, { allowPrivate: false })).toEqual({
      retryDelaysMs: [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000],
      timeoutMs: 15_000,
      concurrency: 16,
      deliveryRetentionMs: 30 * 86_400_000,
      reportCheckMs: 60_000,
    });
  });

  it('reads every channel and setting', () => {
    const config = notificationConfig(
      {
        SMTP_URL: 'smtp://fleet:secret@mail.example.com:587',
        SMTP_FROM: 'Fleet <fleet@example.com>',
        SMTP_REQUIRE_TLS: 'true',
        ...vapid,
        TELEGRAM_BOT_TOKEN: '123456:ABC-def_GHI',
        TELEGRAM_API_URL: 'http://127.0.0.1:8081/',
        SMS_URL: 'https://sms.example.com/send',
        SMS_BODY: '{"to":"{phone}","text":"{message}"}',
        SMS_CONTENT_TYPE: 'application/json; charset=utf-8',
        SMS_AUTHORIZATION: 'Bearer xyz',
        NOTIFICATION_RETRY_S: '5, 30,600',
        NOTIFICATION_TIMEOUT_MS: '2000',
        NOTIFICATION_CONCURRENCY: '3',
        NOTIFICATION_DELIVERY_RETENTION_DAYS: '7',
        REPORT_CHECK_S: '15',
      },
      { allowPrivate: true },
    );
    expect(config).toEqual({
      email: { url: 'smtp://fleet:secret@mail.example.com:587', from: 'Fleet <fleet@example.com>', requireTls: true },
      push: { publicKey: keys.publicKey, privateKey: keys.privateKey, subject: 'mailto:ops@example.com', allowPrivate: true },
      telegram: { token: '123456:ABC-def_GHI', apiUrl: 'http://127.0.0.1:8081' },
      sms: { url: 'https://sms.example.com/send', body: '{"to":"{phone}","text":"{message}"}', contentType: 'application/json; charset=utf-8', authorization: 'Bearer xyz' },
      retryDelaysMs: [5000, 30_000, 600_000],
      timeoutMs: 2000,
      concurrency: 3,
      deliveryRetentionMs: 7 * 86_400_000,
      reportCheckMs: 15_000,
    });
    expect(notificationConfig({ TELEGRAM_BOT_TOKEN: '1:a' }, { allowPrivate: false }).telegram?.apiUrl).toBe('https://api.telegram.org');
    expect(notificationConfig({ SMS_URL: 'http://gw/{phone}?m={message}' }, { allowPrivate: false }).sms).toEqual({
      url: 'http://gw/{phone}?m={message}',
      contentType: 'application/x-www-form-urlencoded',
    });
  });

  it.each<[string, Env, RegExp]>([
    ['SMTP_URL of another scheme', { SMTP_URL: 'https://mail.example.com', SMTP_FROM: 'a@b.co' }, /SMTP_URL must start with smtp:\/\/ .* or smtps:\/\//],
    ['SMTP_URL without SMTP_FROM', { SMTP_URL: 'smtp://mail.example.com' }, /SMTP_FROM is required with SMTP_URL/],
    ['SMTP_FROM that is no address', { SMTP_URL: 'smtps://mail.example.com', SMTP_FROM: 'Fleet' }, /SMTP_FROM must be an email address/],
    ['SMTP_FROM alone', { SMTP_FROM: 'fleet@example.com' }, /SMTP_FROM is set without SMTP_URL/],
    ['SMTP_REQUIRE_TLS not a flag', { SMTP_URL: 'smtp://m.example.com', SMTP_FROM: 'a@b.co', SMTP_REQUIRE_TLS: 'yes' }, /SMTP_REQUIRE_TLS must be true or false/],
    ['one VAPID key', { VAPID_PUBLIC_KEY: keys.publicKey, VAPID_SUBJECT: 'mailto:a@b.co' }, /VAPID_PUBLIC_KEY is set without VAPID_PRIVATE_KEY; set both/],
    ['VAPID keys without a subject', { ...vapid, VAPID_SUBJECT: '' }, /VAPID_SUBJECT is required/],
    ['VAPID_SUBJECT of http', { ...vapid, VAPID_SUBJECT: 'http://example.com' }, /VAPID_SUBJECT must be a mailto: address or an https:\/\/ URL/],
    ['VAPID_SUBJECT alone', { VAPID_SUBJECT: 'mailto:a@b.co' }, /VAPID_SUBJECT is set without VAPID_PUBLIC_KEY/],
    ['a padded public key', { ...vapid, VAPID_PUBLIC_KEY: `${keys.publicKey}=` }, /VAPID_PUBLIC_KEY must be base64url/],
    ['a short public key', { ...vapid, VAPID_PUBLIC_KEY: keys.publicKey.slice(0, 43) }, /VAPID_PUBLIC_KEY must be an uncompressed P-256 public key \(65 bytes/],
    ['a long private key', { ...vapid, VAPID_PRIVATE_KEY: keys.publicKey }, /VAPID_PRIVATE_KEY must be a P-256 private key \(32 bytes/],
    ['keys of two pairs', { ...vapid, VAPID_PUBLIC_KEY: webPush.generateVAPIDKeys().publicKey }, /VAPID_PUBLIC_KEY is not the public key of VAPID_PRIVATE_KEY/],
    ['a Telegram token of another shape', { TELEGRAM_BOT_TOKEN: 'not a token' }, /TELEGRAM_BOT_TOKEN must be a bot token/],
    ['TELEGRAM_API_URL alone', { TELEGRAM_API_URL: 'https://api.telegram.org' }, /TELEGRAM_API_URL is set without TELEGRAM_BOT_TOKEN/],
    ['SMS_URL of ftp', { SMS_URL: 'ftp://gw/{phone}/{message}' }, /SMS_URL must start with https:\/\/ or http:\/\//],
    ['SMS_URL without {message}', { SMS_URL: 'https://gw/send?to={phone}' }, /must contain \{message\}/],
    ['SMS without either placeholder', { SMS_URL: 'https://gw/send', SMS_BODY: 'hello' }, /must contain \{phone\} and \{message\}/],
    ['an unknown SMS_CONTENT_TYPE', { SMS_URL: 'https://gw/send', SMS_BODY: '<to>{phone}</to><t>{message}</t>', SMS_CONTENT_TYPE: 'application/xml' }, /SMS_CONTENT_TYPE must be one of/],
    ['SMS_CONTENT_TYPE without SMS_BODY', { SMS_URL: 'https://gw/?p={phone}&m={message}', SMS_CONTENT_TYPE: 'application/json' }, /SMS_CONTENT_TYPE is set without SMS_BODY/],
    ['SMS_BODY alone', { SMS_BODY: '{phone} {message}' }, /SMS_BODY is set without SMS_URL/],
    ['a retry list with a zero', { NOTIFICATION_RETRY_S: '10,0,60' }, /NOTIFICATION_RETRY_S must be a comma-separated list/],
    ['a retry list with a gap', { NOTIFICATION_RETRY_S: '10,,60' }, /NOTIFICATION_RETRY_S must be a comma-separated list/],
    ['a retry list with a fraction', { NOTIFICATION_RETRY_S: '1.5' }, /NOTIFICATION_RETRY_S must be a comma-separated list/],
    ['a zero timeout', { NOTIFICATION_TIMEOUT_MS: '0' }, /NOTIFICATION_TIMEOUT_MS must be an integer from 100/],
    ['a zero concurrency', { NOTIFICATION_CONCURRENCY: '0' }, /NOTIFICATION_CONCURRENCY must be an integer from 1/],
    ['a zero report check', { REPORT_CHECK_S: '0' }, /REPORT_CHECK_S must be an integer from 1/],
  ])('refuses %s', (_, env, expected) => {
    expect(startupErrorOf(env)).toMatch(expected);
  });

  it('never repeats a password or a bot token in its messages', () => {
    expect(startupErrorOf({ SMTP_URL: 'smtp://fleet:hunter2@[bad', SMTP_FROM: 'a@b.co' })).not.toContain('hunter2');
    expect(startupErrorOf({ TELEGRAM_BOT_TOKEN: '123:secret token' })).not.toContain('secret');
  });

  it('accepts an https VAPID subject, and a key pair made with node:crypto', () => {
    const ecdh = createECDH('prime256v1');
    ecdh.generateKeys();
    const push = notificationConfig(
      { VAPID_PUBLIC_KEY: ecdh.getPublicKey().toString('base64url'), VAPID_PRIVATE_KEY: ecdh.getPrivateKey().toString('base64url'), VAPID_SUBJECT: 'https://fleet.example.com/contact' },
      { allowPrivate: false },
    ).push;
    expect(push).toMatchObject({ subject: 'https://fleet.example.com/contact', allowPrivate: false });
  });
});

describe('fleet notifications vapid-keys', () => {
  it('prints a new key pair as env lines that notificationConfig accepts', async () => {
    const run = await runFleet(['notifications', 'vapid-keys'], {});
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    const env = Object.fromEntries(lines.map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]));
    expect(Object.keys(env)).toEqual(['VAPID_PUBLIC_KEY', 'VAPID_PRIVATE_KEY']);
    const push = notificationConfig({ ...env, VAPID_SUBJECT: 'mailto:ops@example.com' }, { allowPrivate: false }).push;
    expect(push).toMatchObject({ publicKey: env.VAPID_PUBLIC_KEY, privateKey: env.VAPID_PRIVATE_KEY });
    const again = await runFleet(['notifications', 'vapid-keys', '--json'], {});
    expect(JSON.parse(again.stdout).publicKey).not.toBe(env.VAPID_PUBLIC_KEY);
  });
});
