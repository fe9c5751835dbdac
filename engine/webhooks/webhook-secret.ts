import { randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** A signing secret as the Standard Webhooks libraries take it: `whsec_` and base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** The HMAC key of a secret: the base64-decoded part after `whsec_`. */
export function webhookSigningKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}
