import { createHmac } from 'node:crypto';
import { webhookSigningKey } from './webhook-secret.ts';

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The Standard Webhooks headers of one delivery attempt: `v1,` + base64 HMAC-SHA256 of
 * `<id>.<timestamp>.<body>` with each secret's key, space-separated when a rotation leaves two
 * secrets signing, so a receiver holding either verifies.
 */
export function signWebhook(messageId: string, timestampSeconds: number, body: string, secrets: readonly string[]): SignedHeaders {
  const content = `${messageId}.${timestampSeconds}.${body}`;
  const signatures = secrets.map((secret) => `v1,${createHmac('sha256', webhookSigningKey(secret)).update(content).digest('base64')}`);
  return { 'webhook-id': messageId, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': signatures.join(' ') };
}
