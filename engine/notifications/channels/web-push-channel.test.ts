import webPush from 'web-push';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NotificationMessage } from '../../../domain/notifications/notification-message.ts';
import { silentLogger } from '../../../runtime/logger.ts';
import { startPushTestService, type PushTestService, type TestSubscription } from '../../../test/support/push-test-service.ts';
import type { ChannelAddress } from './channel.ts';
import { createWebPushChannel } from './web-push-channel.ts';

const message: NotificationMessage = {
  subject: 'Truck 7 entered Depot North',
  text: 'Truck 7 entered Depot North at 14:02.',
  html: '<p>Truck 7 entered Depot North at 14:02.</p>',
  short: 'Truck 7 entered Depot North at 14:02',
  url: 'https://fleet.example.com/map?vehicle=356307042441013',
};

const keys = webPush.generateVAPIDKeys();
const settings = { publicKey: keys.publicKey, privateKey: keys.privateKey, subject: 'mailto:ops@example.com', allowPrivate: true };
const channel = createWebPushChannel(settings, { timeoutMs: 5000, log: silentLogger });
let service: PushTestService;

beforeAll(async () => {
  service = await startPushTestService();
});
afterAll(async () => {
  await channel.close();
  await service.close();
});

function address(subscription: TestSubscription): ChannelAddress {
  return { push: { endpoint: subscription.endpoint, p256dh: subscription.keys.p256dh, auth: subscription.keys.auth } };
}

describe('web push channel', () => {
  it('sends {title, body, url} encrypted for the subscription, signed with the VAPID key for the endpoint\'s origin', async () => {
    const subscription = service.subscription({ applicationServerKey: keys.publicKey });
    expect(await channel.send(address(subscription), message)).toEqual({ outcome: 'sent' });
    const push = service.received.find((p) => p.endpoint === subscription.endpoint);
    expect(push).toBeDefined();
    expect(JSON.parse(push!.payload)).toEqual({ title: message.subject, body: message.short, url: message.url });
    expect(push!.vapidKey).toBe(keys.publicKey);
    expect(push!.claims).toMatchObject({ aud: service.origin, sub: 'mailto:ops@example.com' });
    expect(push!.ttl).toBe(86_400);
    expect(push!.urgency).toBe('high');
  });

  it('fails when the push service refuses the VAPID signature (a subscription made for another key)', async () => {
    const other = webPush.generateVAPIDKeys();
    const subscription = service.subscription({ applicationServerKey: other.publicKey });
    expect(await channel.send(address(subscription), message)).toMatchObject({ outcome: 'failed', error: expect.stringContaining('403') });
    expect(service.received.some((p) => p.endpoint === subscription.endpoint)).toBe(false);
  });

  it('reports a subscription the browser dropped (410, 404) as gone', async () => {
    const dropped = service.subscription();
    service.unsubscribe(dropped.endpoint);
    expect(await channel.send(address(dropped), message)).toMatchObject({ outcome: 'failed', gone: true, error: expect.stringContaining('410') });
    const unknown = { endpoint: `${service.origin}/push/never-made`, keys: service.subscription().keys };
    expect(await channel.send(address(unknown), message)).toMatchObject({ outcome: 'failed', gone: true, error: expect.stringContaining('404') });
  });

  it('retries 429 after its Retry-After, and 5xx', async () => {
    const subscription = service.subscription();
    service.answerNext(429, 1, { 'retry-after': '7' });
    expect(await channel.send(address(subscription), message)).toMatchObject({ outcome: 'retry', retryAfterMs: 7000 });
    service.answerNext(503);
    expect(await channel.send(address(subscription), message)).toMatchObject({ outcome: 'retry', error: expect.stringContaining('503') });
    expect(await channel.send(address(subscription), message)).toEqual({ outcome: 'sent' });
  });

  it('fails for good on another 4xx, without calling the subscription gone', async () => {
    const subscription = service.subscription();
    service.answerNext(413);
    const result = await channel.send(address(subscription), message);
    expect(result).toMatchObject({ outcome: 'failed', error: expect.stringContaining('413') });
    expect(result).not.toHaveProperty('gone');
  });

  it('refuses loopback, private and http:// endpoints unless WEBHOOK_ALLOW_PRIVATE', async () => {
    const strict = createWebPushChannel({ ...settings, allowPrivate: false }, { timeoutMs: 5000, log: silentLogger });
    const before = service.received.length + service.refused.length;
    const local = service.subscription();
    expect(await strict.send(address(local), message)).toMatchObject({ outcome: 'failed', error: expect.stringContaining('https://') });
    const https = { ...local, endpoint: local.endpoint.replace('http://', 'https://') };
    expect(await strict.send(address(https), message)).toMatchObject({ outcome: 'failed', error: expect.stringContaining('loopback, private') });
    const privateNet = { ...local, endpoint: 'https://10.1.2.3/push/abc' };
    expect(await strict.send(address(privateNet), message)).toMatchObject({ outcome: 'failed', error: expect.stringContaining('10.1.2.3') });
    expect(service.received.length + service.refused.length).toBe(before);
  });

  it('fails, as gone, a subscription whose keys cannot encrypt', async () => {
    const subscription = service.subscription();
    const broken = { push: { endpoint: subscription.endpoint, p256dh: 'not-a-key', auth: subscription.keys.auth } };
    expect(await channel.send(broken, message)).toMatchObject({ outcome: 'failed', gone: true });
  });

  it('retries when the push service cannot be reached', async () => {
    const gone = await startPushTestService();
    const subscription = gone.subscription();
    await gone.close();
    expect(await channel.send(address(subscription), message)).toMatchObject({ outcome: 'retry', error: expect.stringContaining('ECONNREFUSED') });
  });
});
