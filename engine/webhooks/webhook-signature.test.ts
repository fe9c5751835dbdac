import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signWebhook } from './webhook-signature.ts';
import { newWebhookSecret, webhookSigningKey } from './webhook-secret.ts';

// The published Standard Webhooks library is the reference: what it verifies, integrators verify.

const body = JSON.stringify({ id: '42', type: 'vehicle.ignition.on', timestamp: '2024-05-01T10:00:00.000Z', data: { vehicle: { name: 'Truck 7' } } });
const now = () => Math.floor(Date.now() / 1000);

describe('webhook secrets', () => {
  it('are whsec_ and base64 of 32 random bytes, a new one each time', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(webhookSigningKey(a)).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(a);
  });
});

describe('webhook signatures', () => {
  it('are the Standard Webhooks signature: the published library signs the same and verifies ours', () => {
    const secret = newWebhookSecret();
    const timestamp = now();
    const headers = signWebhook('msg_1', timestamp, body, [secret]);
    expect(headers['webhook-id']).toBe('msg_1');
    expect(headers['webhook-timestamp']).toBe(String(timestamp));
    expect(headers['webhook-signature']).toBe(new Webhook(secret).sign('msg_1', new Date(timestamp * 1000), body));
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('carry two signatures during a rotation, each verifiable by a receiver holding one secret', () => {
    const current = newWebhookSecret();
    const previous = newWebhookSecret();
    const headers = signWebhook('42', now(), body, [current, previous]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    expect(() => new Webhook(current).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(previous).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(newWebhookSecret()).verify(body, { ...headers })).toThrow();
  });

  it('fail verification when the body, the id or the timestamp changed', () => {
    const secret = newWebhookSecret();
    const headers = signWebhook('42', now(), body, [secret]);
    const hook = new Webhook(secret);
    expect(() => hook.verify(body.replace('Truck 7', 'Truck 8'), { ...headers })).toThrow();
    expect(() => hook.verify(body, { ...headers, 'webhook-id': '43' })).toThrow();
    expect(() => hook.verify(body, { ...headers, 'webhook-timestamp': String(now() - 1) })).toThrow();
  });
});
