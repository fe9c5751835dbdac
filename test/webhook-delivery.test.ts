import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.ts';
import { appendEvents } from '../db/event-log.ts';
import type { NewEvent } from '../domain/events/event-payloads.ts';
import { fanOutEvents } from '../db/webhook-deliveries.ts';
import { bullmqQueues } from '../engine/queue/bullmq-queues.ts';
import { inProcessQueues } from '../engine/queue/in-process-queue.ts';
import { silentLogger } from '../runtime/logger.ts';
import { startWebhookDelivery, type RunningWebhookDelivery, type WebhookDeliverySettings } from '../engine/webhooks/start-webhook-delivery.ts';
import { enqueueDeliveries, WEBHOOKS_QUEUE } from '../engine/webhooks/webhook-jobs.ts';
import { newWebhookSecret } from '../engine/webhooks/webhook-secret.ts';
import type { QueueBackend } from '../engine/queue/job-queue.ts';
import { pruneEngineHistory } from '../engine/workers/prune-history.ts';
import { testQueues } from './support/engine-harness.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { until } from './support/eventually.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// Webhook delivery end to end: events appended to the log, fan-out, the queue (BullMQ with REDIS_URL),
// and real HTTP receivers on 127.0.0.1 that check every request with the published Standard Webhooks
// library. Retries wait 200 ms instead of the schedule's 5 s, 5 min, ... The timeout is 2 s, not less:
// the embedded database shares this event loop, and on a loaded machine it has held a prompt answer
// past a 1 s timeout.

const SETTINGS: WebhookDeliverySettings = {
  timeoutMs: 2_000, allowPrivate: true, concurrency: 8, perWebhookInFlight: 2, maxConsecutiveFailures: 3,
  retryDelaysMs: [200, 200, 200, 200], fanOutPollMs: 50, sweepMs: 500,
};

interface Received { id: string; timestamp: string; body: any; verified: boolean; at: number }

/** A receiver whose answer to each request the test decides; it verifies signatures as integrators do. */
async function receiver(answer: (n: number, req: IncomingMessage, res: ServerResponse) => void, secret: () => string[]) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const headers = { 'webhook-id': String(req.headers['webhook-id']), 'webhook-timestamp': String(req.headers['webhook-timestamp']), 'webhook-signature': String(req.headers['webhook-signature']) };
      const verified = secret().some((s) => {
        try {
          new Webhook(s).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      received.push({ id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], body: JSON.parse(body), verified, at: Date.now() });
      answer(received.length, req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { received, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

let database: TestDatabase;
let queues: QueueBackend;
let queuePrefix: string;
let delivery: RunningWebhookDelivery;
let accountId: number;
let userId: number;
let device: { id: number; imei: string };
let sequence = 0;

beforeAll(async () => {
  database = await openTestDatabase();
  ({ backend: queues, prefix: queuePrefix } = testQueues());
  const make = fixtures(database.db);
  const tenant = await make.tenant();
  accountId = tenant.account.id;
  userId = tenant.user.id;
  device = await make.device(accountId, { name: 'Hook Truck', userIds: [userId] });
  delivery = await startWebhookDelivery(database, queues, silentLogger, SETTINGS);
});
afterAll(async () => {
  await delivery?.close();
  await queues?.close();
  await database?.destroy();
});

async function webhook(url: string, events: string[] = ['vehicle.*'], secret = newWebhookSecret(), options: { userId?: number; mode?: 'live' | 'test' } = {}) {
  const row = await database.db
    .insertInto('webhooks')
    .values({ account_id: accountId, user_id: options.userId ?? userId, mode: options.mode ?? 'live', url, events, description: null, secret })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { ...row, secret };
}

async function logEvent(extra: Partial<NewEvent> = {}): Promise<string> {
  const event: NewEvent = {
    type: 'vehicle.geofence.enter', occurredAt: new Date(), deviceId: device.id, data: { geofence: { id: 1, name: 'Depot' } },
    dedupeKey: `hook-test-${process.pid}-${++sequence}`, ...extra,
  };
  const [id] = await database.db.transaction().execute((trx) => appendEvents(trx, [event]));
  return id!;
}

const deliveryOf = (webhookId: number) => database.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).orderBy('id').execute();

describe('webhook delivery', () => {
  it('POSTs the event signed per Standard Webhooks, verified by its published library', async () => {
    const r = await receiver((_, __, res) => res.writeHead(204).end(), () => [hook.secret]);
    const hook = await webhook(r.url);
    try {
      const id = await logEvent();
      await until(() => r.received.length === 1);
      expect(r.received[0]).toMatchObject({ id, verified: true });
      expect(r.received[0]!.body).toMatchObject({ id, type: 'vehicle.geofence.enter', data: { vehicle: { name: 'Hook Truck', imei: device.imei }, geofence: { name: 'Depot' } } });
      await until(async () => (await deliveryOf(hook.id))[0]?.status === 'succeeded');
    } finally {
      await r.close();
    }
  });

  it('retries a 500 with the same webhook-id, and records each attempt', async () => {
    const r = await receiver((n, _, res) => res.writeHead(n === 1 ? 500 : 200).end(n === 1 ? `boom${'x'.repeat(20_000)}` : 'ok'), () => [hook.secret]);
    const hook = await webhook(r.url);
    try {
      const id = await logEvent();
      await until(() => r.received.length === 2);
      expect(r.received.map((x) => x.id)).toEqual([id, id]);
      expect(r.received.every((x) => x.verified)).toBe(true);
      expect(r.received[1]!.at - r.received[0]!.at).toBeGreaterThanOrEqual(150);
      await until(async () => (await deliveryOf(hook.id))[0]?.status === 'succeeded');
      const attempts = await database.db.selectFrom('webhook_delivery_attempts').selectAll().where('delivery_id', '=', (await deliveryOf(hook.id))[0]!.id).orderBy('attempt').execute();
      expect(attempts.map((a) => [a.attempt, a.status_code])).toEqual([[1, 500], [2, 200]]);
      // A long answer is kept short: enough to debug with, never the receiver's whole page.
      expect(attempts[0]!.error).toMatch(/^HTTP 500: boomx+$/);
      expect(attempts[0]!.error!.length).toBeLessThan(600);
      const [row] = await deliveryOf(hook.id);
      expect(row).toMatchObject({ status: 'succeeded', attempts: 2, last_status_code: 200, last_error: null, next_attempt_at: null, claimed_until: null });
      expect(row!.last_duration_ms).toBeGreaterThanOrEqual(0);
    } finally {
      await r.close();
    }
  });

  it('counts a timeout and a redirect as failures, never following the redirect', async () => {
    const elsewhere = await receiver((_, __, res) => res.writeHead(200).end(), () => [hook.secret]);
    const r = await receiver((n, _, res) => {
      if (n === 1) return; // never answers: the 2 s timeout
      if (n === 2) return res.writeHead(302, { location: elsewhere.url }).end();
      res.writeHead(200).end();
    }, () => [hook.secret]);
    const hook = await webhook(r.url);
    try {
      await logEvent();
      await until(() => r.received.length === 3);
      await until(async () => (await deliveryOf(hook.id))[0]?.status === 'succeeded');
      const [d] = await deliveryOf(hook.id);
      const attempts = await database.db.selectFrom('webhook_delivery_attempts').selectAll().where('delivery_id', '=', d!.id).orderBy('attempt').execute();
      expect(attempts[0]!.error).toMatch(/timed out/);
      expect(attempts[1]!.error).toMatch(/redirect .* not followed/);
      expect(attempts.map((a) => a.status_code)).toEqual([null, 302, 200]);
      expect(elsewhere.received).toHaveLength(0);
    } finally {
      await r.close();
      await elsewhere.close();
    }
  });

  it('delivers once a receiver that was down comes back', async () => {
    const r = await receiver((_, __, res) => res.writeHead(200).end(), () => [hook.secret]);
    const url = r.url;
    await r.close(); // down
    const hook = await webhook(url);
    await logEvent();
    await until(async () => ((await deliveryOf(hook.id))[0]?.attempts ?? 0) >= 2);
    const back = await receiver((_, __, res) => res.writeHead(200).end(), () => [hook.secret]);
    try {
      // Same port again: the receiver restarted where the webhook points.
      if (back.url !== url) {
        await database.db.updateTable('webhooks').set({ url: back.url }).where('id', '=', hook.id).execute();
      }
      await until(async () => (await deliveryOf(hook.id))[0]?.status === 'succeeded');
      expect(back.received).toHaveLength(1);
    } finally {
      await back.close();
    }
  });

  it('disables the webhook at once on 410 Gone and logs webhook.disabled', async () => {
    const r = await receiver((_, __, res) => res.writeHead(410).end(), () => [hook.secret]);
    const hook = await webhook(r.url);
    try {
      await logEvent();
      await until(async () => (await database.db.selectFrom('webhooks').select('enabled').where('id', '=', hook.id).executeTakeFirstOrThrow()).enabled === false);
      const row = await database.db.selectFrom('webhooks').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow();
      expect(row.disabled_reason).toMatch(/410/);
      const logged = await database.db.selectFrom('events').selectAll().where('type', '=', 'webhook.disabled').execute();
      expect(logged.some((e) => (e.data as any).webhook.id === hook.id && e.user_id === userId)).toBe(true);
      // A disabled webhook gets nothing more.
      await logEvent();
      await new Promise((r2) => setTimeout(r2, 400));
      expect(r.received).toHaveLength(1);
    } finally {
      await r.close();
    }
  });

  it('disables a webhook after the configured number of events failed in a row', async () => {
    const r = await receiver((_, __, res) => res.writeHead(503).end(), () => [hook.secret]);
    const hook = await webhook(r.url, ['vehicle.status.changed']);
    try {
      for (let i = 0; i < SETTINGS.maxConsecutiveFailures; i++) await logEvent({ type: 'vehicle.status.changed', data: { from: 'Stopped', to: 'Moving' } });
      await until(async () => (await database.db.selectFrom('webhooks').select('enabled').where('id', '=', hook.id).executeTakeFirstOrThrow()).enabled === false, 15_000);
      const row = await database.db.selectFrom('webhooks').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow();
      expect(row.disabled_reason).toMatch(/3 events in a row/);
    } finally {
      await r.close();
    }
  });

  it('signs with both secrets during a rotation', async () => {
    const oldSecret = newWebhookSecret();
    const r = await receiver((_, __, res) => res.writeHead(200).end(), () => [oldSecret]);
    const hook = await webhook(r.url, ['vehicle.*'], newWebhookSecret());
    await database.db.updateTable('webhooks').set({ previous_secret: oldSecret, previous_secret_expires_at: new Date(Date.now() + 60_000) }).where('id', '=', hook.id).execute();
    try {
      await logEvent();
      await until(() => r.received.length === 1);
      // A receiver that still holds only the old secret verifies.
      expect(r.received[0]!.verified).toBe(true);
    } finally {
      await r.close();
    }
  });

  it('sends only what the webhook\'s user may read, of the types it asked for', async () => {
    const make = fixtures(database.db);
    const other = await make.user(accountId);
    const r = await receiver((_, __, res) => res.writeHead(200).end(), () => [hook.secret]);
    const hook = await webhook(r.url, ['vehicle.panic'], newWebhookSecret(), { userId: other.id });
    try {
      await logEvent({ type: 'vehicle.panic', data: { alarm: 'sos' } }); // the other user cannot see the truck
      const visible = await make.device(accountId, { name: 'Shared Truck', userIds: [userId, other.id] });
      await logEvent({ type: 'vehicle.geofence.enter', deviceId: visible.id }); // a type not asked for
      const id = await logEvent({ type: 'vehicle.panic', deviceId: visible.id, data: { alarm: 'sos' } });
      await until(() => r.received.length >= 1);
      await new Promise((r2) => setTimeout(r2, 300));
      expect(r.received.map((x) => x.id)).toEqual([id]);
    } finally {
      await r.close();
    }
  });

  it('keeps a slow receiver from delaying another webhook', async () => {
    const slow = await receiver(() => undefined, () => [slowHook.secret]); // never answers
    const fast = await receiver((_, __, res) => res.writeHead(200).end(), () => [fastHook.secret]);
    const slowHook = await webhook(slow.url, ['vehicle.ignition.*']);
    const fastHook = await webhook(fast.url, ['vehicle.ignition.*']);
    try {
      const sentAt = Date.now();
      for (let i = 0; i < 6; i++) await logEvent({ type: 'vehicle.ignition.on' });
      await until(() => fast.received.length === 6, 5_000);
      expect(Date.now() - sentAt).toBeLessThan(SETTINGS.timeoutMs);
    } finally {
      await slow.close();
      await fast.close();
      await database.db.updateTable('webhooks').set({ enabled: false }).where('id', '=', slowHook.id).execute();
    }
  });

  it('waits out a Retry-After longer than the schedule on 429', async () => {
    const r = await receiver((n, _, res) => (n === 1 ? res.writeHead(429, { 'retry-after': '1' }).end() : res.writeHead(200).end()), () => [hook.secret]);
    const hook = await webhook(r.url);
    try {
      await logEvent();
      await until(() => r.received.length === 2);
      // The schedule says 200 ms; the receiver asked for a second.
      expect(r.received[1]!.at - r.received[0]!.at).toBeGreaterThanOrEqual(950);
      expect(r.received[0]!.id).toBe(r.received[1]!.id);
    } finally {
      await r.close();
    }
  });

  it('sends a delivery once however many jobs name it', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const r = await receiver((_, __, res) => void held.then(() => res.writeHead(200).end()), () => [hook.secret]);
    const hook = await webhook(r.url, ['vehicle.panic']);
    try {
      await logEvent({ type: 'vehicle.panic', data: { alarm: 'sos' } });
      await until(() => r.received.length === 1);
      const [d] = await deliveryOf(hook.id);
      const queue = queues.queue(WEBHOOKS_QUEUE);
      // The API's "deliver soon", the sweep and a retry's job all name the delivery while it is in flight...
      for (let again = 1; again <= 5; again++) await enqueueDeliveries(queue, [{ id: String(d!.id), attempts: 0, again }]);
      await new Promise((r2) => setTimeout(r2, 300));
      release();
      await until(async () => (await deliveryOf(hook.id))[0]?.status === 'succeeded');
      // ...and after it succeeded.
      await enqueueDeliveries(queue, [{ id: String(d!.id), attempts: 1, again: 6 }]);
      await new Promise((r2) => setTimeout(r2, 300));
      expect(r.received).toHaveLength(1);
    } finally {
      release();
      await r.close();
    }
  });

  it('fans each event out once when two processes follow the log', async () => {
    const r = await receiver((_, __, res) => res.writeHead(200).end(), () => [hook.secret]);
    const hook = await webhook(r.url, ['vehicle.ignition.off']);
    // The second process: its own connection pool and queue client on PostgreSQL and Redis.
    const secondDatabase: DatabaseHandle = database.env.DATABASE_URL
      ? await openDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: '', embedded: 'own' })
      : database;
    const secondQueues = process.env.REDIS_URL ? bullmqQueues(process.env.REDIS_URL, { prefix: queuePrefix }) : inProcessQueues();
    const second = await startWebhookDelivery(secondDatabase, secondQueues, silentLogger, SETTINGS);
    try {
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push(await logEvent({ type: 'vehicle.ignition.off' }));
      await until(() => r.received.length >= 20);
      await new Promise((r2) => setTimeout(r2, 300));
      expect(r.received.map((x) => x.id).sort()).toEqual([...ids].sort());
      expect(await deliveryOf(hook.id)).toHaveLength(20);
    } finally {
      await second.close();
      await secondQueues.close();
      if (secondDatabase !== database) await secondDatabase.close();
      await r.close();
    }
  });

  it('refuses a loopback receiver at delivery time when private addresses are not allowed', async () => {
    await delivery.close();
    delivery = await startWebhookDelivery(database, queues, silentLogger, { ...SETTINGS, allowPrivate: false, retryDelaysMs: [] });
    const r = await receiver((_, __, res) => res.writeHead(200).end(), () => [hook.secret]);
    const hook = await webhook(r.url, ['travel.*']);
    try {
      await logEvent({ type: 'travel.started', data: { travel: { id: 1, status: 'In progress' } } });
      await until(async () => (await deliveryOf(hook.id))[0]?.status === 'failed');
      expect((await deliveryOf(hook.id))[0]!.last_error).toMatch(/127\.0\.0\.1.*may not reach/);
      expect(r.received).toHaveLength(0);
    } finally {
      await r.close();
      await delivery.close();
      delivery = await startWebhookDelivery(database, queues, silentLogger, SETTINGS);
    }
  });

  it('sends a delivery claimed by a process that died as soon as the claim runs out, not a sweep later', async () => {
    const r = await receiver((_, __, res) => res.writeHead(200).end(), () => [hook.secret]);
    const hook = await webhook(r.url, ['vehicle.ignition.on']);
    try {
      await delivery.close();
      const id = await logEvent({ type: 'vehicle.ignition.on' });
      // A process fans the event out, claiming the delivery, and dies before sending it; its claim ends soon.
      const claimed = (await fanOutEvents(database.db, 1_000, 60_000)).deliveries.filter((d) => d.webhookId === hook.id);
      expect(claimed.map((d) => d.payload.id)).toEqual([id]);
      await database.db.updateTable('webhook_deliveries').set({ claimed_until: sql<Date>`now() + interval '1500 milliseconds'` }).where('webhook_id', '=', hook.id).execute();
      // The next process sweeps at its start, and not again for a minute.
      delivery = await startWebhookDelivery(database, queues, silentLogger, { ...SETTINGS, sweepMs: 60_000 });
      await until(() => r.received.length === 1, 10_000);
      expect(r.received[0]).toMatchObject({ id, verified: true });
      await until(async () => (await deliveryOf(hook.id))[0]?.status === 'succeeded');
    } finally {
      await r.close();
      await delivery.close();
      delivery = await startWebhookDelivery(database, queues, silentLogger, SETTINGS);
    }
  });

  it('sends a delivery whose dead claim runs out behind a backlog of its own account, not a sweep later', async () => {
    const busy = await receiver((_, __, res) => res.writeHead(204).end(), () => [busyHook.secret]);
    const busyHook = await webhook(busy.url, ['vehicle.overspeed']);
    const r = await receiver((_, __, res) => res.writeHead(200).end(), () => [hook.secret]);
    const hook = await webhook(r.url, ['vehicle.ignition.on']);
    try {
      await delivery.close();
      // More due for one webhook than a process holds for the account: the sweep leaves the rest to the refill.
      for (let i = 0; i < 20; i++) await logEvent({ type: 'vehicle.overspeed' });
      const id = await logEvent({ type: 'vehicle.ignition.on' });
      await fanOutEvents(database.db, 1_000, 60_000);
      await database.db.updateTable('webhook_deliveries').set({ claimed_until: null }).where('webhook_id', '=', busyHook.id).execute();
      // The account's other webhook had its delivery claimed by a process that died; the claim ends after the backlog is gone.
      await database.db.updateTable('webhook_deliveries').set({ claimed_until: sql<Date>`now() + interval '3 seconds'` }).where('webhook_id', '=', hook.id).execute();
      delivery = await startWebhookDelivery(database, queues, silentLogger, { ...SETTINGS, sweepMs: 60_000 });
      await until(() => busy.received.length === 20, 10_000);
      await until(() => r.received.length === 1, 10_000);
      expect(r.received[0]).toMatchObject({ id, verified: true });
    } finally {
      await r.close();
      await busy.close();
      await delivery.close();
      delivery = await startWebhookDelivery(database, queues, silentLogger, SETTINGS);
    }
  });

  it('loses no delivery when the process restarts in the middle of a retry schedule', async () => {
    const r = await receiver((n, _, res) => res.writeHead(n === 1 ? 500 : 200).end(), () => [hook.secret]);
    const hook = await webhook(r.url, ['vehicle.overspeed']);
    try {
      await delivery.close();
      await queues.close();
      // Restarted with a long wait before the retry, then stopped after the first attempt.
      ({ backend: queues, prefix: queuePrefix } = testQueues());
      delivery = await startWebhookDelivery(database, queues, silentLogger, { ...SETTINGS, retryDelaysMs: [1_500, 200] });
      const id = await logEvent({ type: 'vehicle.overspeed', data: { speedKmh: 99, limitKmh: 80 } });
      await until(() => r.received.length === 1);
      await until(async () => ((await deliveryOf(hook.id))[0]?.attempts ?? 0) === 1);
      await delivery.close();
      await queues.close(); // the in-process queue loses its delayed job here
      ({ backend: queues, prefix: queuePrefix } = testQueues());
      delivery = await startWebhookDelivery(database, queues, silentLogger, SETTINGS);
      await until(() => r.received.length === 2, 10_000);
      expect(r.received.map((x) => x.id)).toEqual([id, id]);
      await until(async () => (await deliveryOf(hook.id))[0]?.status === 'succeeded');
    } finally {
      await r.close();
    }
  });
});

describe('webhook delivery retention', () => {
  it('prunes finished deliveries and their attempts past the retention, never pending ones', async () => {
    const DAY = 86_400_000;
    const hook = await webhook('http://127.0.0.1:1/retired', ['webhook.test']);
    // Disabled, so the pending row below stays put instead of being sent.
    await database.db.updateTable('webhooks').set({ enabled: false }).where('id', '=', hook.id).execute();
    const rows = await database.db
      .insertInto('webhook_deliveries')
      .values((['succeeded', 'failed', 'pending', 'succeeded'] as const).map((status) => ({ webhook_id: hook.id, event_type: 'webhook.test', payload: '{}', status, next_attempt_at: null })))
      .returning('id')
      .execute();
    const ids = rows.map((r) => r.id);
    await database.db.insertInto('webhook_delivery_attempts').values(ids.map((id) => ({ delivery_id: id, attempt: 1, attempted_at: new Date(), status_code: 200, error: null, duration_ms: 5 }))).execute();
    // The first three are 31 days old; the last is new.
    await database.db.updateTable('webhook_deliveries').set({ created_at: new Date(Date.now() - 31 * DAY) } as never).where('id', 'in', ids.slice(0, 3)).execute();
    const pruned = await pruneEngineHistory(database.db, { geofenceChangesMs: DAY, lateFixesMs: DAY, webhookDeliveriesMs: 30 * DAY });
    expect(pruned.webhookDeliveries).toBe(2);
    const left = await database.db.selectFrom('webhook_deliveries').select(['id', 'status']).where('webhook_id', '=', hook.id).orderBy('id').execute();
    expect(left).toEqual([{ id: ids[2], status: 'pending' }, { id: ids[3], status: 'succeeded' }]);
    const attempts = await database.db.selectFrom('webhook_delivery_attempts').select('delivery_id').where('delivery_id', 'in', ids).orderBy('delivery_id').execute();
    expect(attempts.map((a) => Number(a.delivery_id))).toEqual([ids[2], ids[3]].map(Number));
  });
});
