import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { silentLogger } from '../runtime/logger.ts';
import { startWebhookDelivery, type RunningWebhookDelivery } from '../engine/webhooks/start-webhook-delivery.ts';
import { enqueueDeliveries, WEBHOOKS_QUEUE } from '../engine/webhooks/webhook-jobs.ts';
import type { QueueBackend } from '../engine/queue/job-queue.ts';
import { testQueues } from './support/engine-harness.ts';
import { startTestApp, TEST_CONFIG, type TestApp } from './support/test-app.ts';

// The /webhooks API as an integrator uses it: register, read, change, rotate, ping, and read the
// delivery log — the ping going out through the real delivery workers to a receiver that verifies it
// with the Standard Webhooks library.

let t: TestApp;
let key: string;
let userId: number;
let queues: QueueBackend;
let delivery: RunningWebhookDelivery;
let receiver: Server;
let receiverUrl: string;
const received: Array<{ headers: Record<string, string>; body: string }> = [];

beforeAll(async () => {
  t = await startTestApp();
  const tenant = await t.fixtures.tenant();
  key = tenant.key;
  userId = tenant.user.id;
  queues = testQueues().backend;
  delivery = await startWebhookDelivery(t.database, queues, silentLogger, {
    timeoutMs: 2_000, allowPrivate: true, concurrency: 4, perWebhookInFlight: 2, maxConsecutiveFailures: 5, retryDelaysMs: [200], fanOutPollMs: 50, sweepMs: 500,
  });
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
});
afterAll(async () => {
  receiver?.close();
  await delivery?.close();
  await queues?.close();
  await t?.close();
});

const create = (body: unknown, as = key) => t.json('/api/v1/webhooks', { key: as, method: 'POST', body });

describe('/webhooks', () => {
  it('registers a webhook and shows its secret only once', async () => {
    const { status, body } = await create({ url: receiverUrl, events: ['vehicle.geofence.*', 'vehicle.panic'], description: 'Dispatch board' });
    expect(status).toBe(201);
    expect(body.data).toMatchObject({ url: receiverUrl, events: ['vehicle.geofence.*', 'vehicle.panic'], description: 'Dispatch board', enabled: true, disabledReason: null });
    expect(body.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(body.data.secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    const read = await t.json(`/api/v1/webhooks/${body.data.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.body.data).not.toHaveProperty('secret');
  });

  it('says what is wrong with a registration', async () => {
    expect((await create({ url: 'ftp://example.com', events: ['*'] })).body.error).toMatch(/https:\/\/ or http:\/\//);
    expect((await create({ url: receiverUrl, events: ['vehicle.teleported'] })).body.error).toMatch(/unknown event type "vehicle.teleported"/);
    expect((await create({ url: receiverUrl, events: [] })).status).toBe(400);
    expect((await create({ events: ['*'] })).body.error).toMatch(/url is required/);
    // With private addresses not allowed (the default outside tests), a loopback receiver is refused at once.
    const strict = createApp({ db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(1000, 10_000), config: { ...TEST_CONFIG, webhookAllowPrivate: false } });
    const res = await strict.request('/api/v1/webhooks', {
      method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiverUrl, events: ['*'] }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toMatch(/127\.0\.0\.1.*may not reach/);
  });

  it('pages through the key\'s webhooks with no duplicate and none missed', async () => {
    const tenant = await t.fixtures.tenant();
    const ids: number[] = [];
    for (let i = 0; i < 7; i++) ids.push((await create({ url: receiverUrl, events: ['*'] }, tenant.key)).body.data.id);
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const { body }: { body: any } = await t.json(`/api/v1/webhooks?limit=3${cursor ? `&cursor=${cursor}` : ''}`, { key: tenant.key });
      seen.push(...body.data.map((w: any) => w.id));
      cursor = body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);
  });

  it('changes, disables and enables again, clearing the reason it was disabled', async () => {
    const { body } = await create({ url: receiverUrl, events: ['*'] });
    const id = body.data.id;
    await t.database.db.updateTable('webhooks').set({ enabled: false, disabled_reason: 'the receiver answered 410 Gone', consecutive_failures: 4 }).where('id', '=', id).execute();
    const patched = await t.json(`/api/v1/webhooks/${id}`, { key, method: 'PATCH', body: { enabled: true, events: ['travel.*'], description: 'Travels' } });
    expect(patched.body.data).toMatchObject({ enabled: true, disabledReason: null, events: ['travel.*'], description: 'Travels' });
    const row = await t.database.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.consecutive_failures).toBe(0);
    expect((await t.json(`/api/v1/webhooks/${id}`, { key, method: 'PATCH', body: { url: 'gopher://x' } })).status).toBe(400);
    expect((await t.json(`/api/v1/webhooks/${id}`, { key, method: 'DELETE' })).status).toBe(200);
    expect((await t.json(`/api/v1/webhooks/${id}`, { key })).status).toBe(404);
  });

  it('rotates the secret, the old one signing beside the new one for 24 h', async () => {
    const { body } = await create({ url: receiverUrl, events: ['*'] });
    const rotated = await t.json(`/api/v1/webhooks/${body.data.id}/rotate-secret`, { key, method: 'POST' });
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).not.toBe(body.data.secret);
    const until = new Date(rotated.body.data.previousSecretExpiresAt).getTime();
    expect(Math.abs(until - (Date.now() + 24 * 3_600_000))).toBeLessThan(60_000);
    const row = await t.database.db.selectFrom('webhooks').selectAll().where('id', '=', body.data.id).executeTakeFirstOrThrow();
    expect(row.previous_secret).toBe(body.data.secret);
  });

  it('sends a signed webhook.test ping and logs the delivery and its attempt', async () => {
    const { body } = await create({ url: receiverUrl, events: ['vehicle.panic'] });
    // The API tells the workers through the queue, as `fleet serve` wires it.
    const api = createApp({
      db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(1000, 10_000), config: TEST_CONFIG,
      webhookDispatch: { deliverSoon: (ids) => enqueueDeliveries(queues.queue(WEBHOOKS_QUEUE), ids.map((id) => ({ id, attempts: 0, again: Date.now() }))) },
    });
    const before = received.length;
    const ping = await api.request(`/api/v1/webhooks/${body.data.id}/test`, { method: 'POST', headers: { Authorization: `Bearer ${key}` } });
    expect(ping.status).toBe(202);
    const queued = ((await ping.json()) as any).data;
    const deadline = Date.now() + 5_000;
    while (received.length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const got = received[received.length - 1]!;
    const payload = new Webhook(body.data.secret).verify(got.body, got.headers) as any;
    expect(payload).toMatchObject({ type: 'webhook.test', data: { webhook: { id: body.data.id } } });
    expect(got.headers['webhook-id']).toBe(`test_${queued.id}`);

    let log: any;
    for (let i = 0; i < 50; i++) {
      log = (await t.json(`/api/v1/webhooks/${body.data.id}/deliveries`, { key })).body;
      if (log.data[0]?.status === 'succeeded') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(log.data[0]).toMatchObject({ id: queued.id, eventType: 'webhook.test', status: 'succeeded', attempts: 1, lastStatusCode: 200, nextAttemptAt: null });
    const detail = await t.json(`/api/v1/webhooks/${body.data.id}/deliveries/${queued.id}`, { key });
    expect(detail.body.data.attemptLog).toMatchObject([{ attempt: 1, statusCode: 200 }]);
    expect((await t.json(`/api/v1/webhooks/${body.data.id}/deliveries/${queued.id}/retry`, { key, method: 'POST' })).status).toBe(409);
  });

  it('keeps webhooks to the key\'s user and mode, and needs the webhooks permissions', async () => {
    const { body } = await create({ url: receiverUrl, events: ['*'] });
    const colleague = await t.fixtures.user((await t.database.db.selectFrom('users').select('account_id').where('id', '=', userId).executeTakeFirstOrThrow()).account_id);
    const colleagueKey = (await t.fixtures.key(colleague.id)).key;
    expect((await t.json(`/api/v1/webhooks/${body.data.id}`, { key: colleagueKey })).status).toBe(404);
    const testKey = (await t.fixtures.key(userId, { mode: 'test' })).key;
    expect((await t.json(`/api/v1/webhooks/${body.data.id}`, { key: testKey })).status).toBe(404);
    const readOnly = (await t.fixtures.key(userId, { permissions: ['webhooks:read'] })).key;
    expect((await t.json(`/api/v1/webhooks/${body.data.id}`, { key: readOnly })).status).toBe(200);
    const refused = await t.json(`/api/v1/webhooks/${body.data.id}`, { key: readOnly, method: 'DELETE' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/webhooks:write/);
  });
});
