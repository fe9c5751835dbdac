import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.ts';
import { appendEvents } from '../db/event-log.ts';
import { claimDueDeliveries, fanOutEvents } from '../db/webhook-deliveries.ts';
import { bullmqQueues } from '../engine/queue/bullmq-queues.ts';
import { inProcessQueues } from '../engine/queue/in-process-queue.ts';
import type { QueueBackend } from '../engine/queue/job-queue.ts';
import { startWebhookDelivery, type RunningWebhookDelivery, type WebhookDeliverySettings } from '../engine/webhooks/start-webhook-delivery.ts';
import { newWebhookSecret } from '../engine/webhooks/webhook-secret.ts';
import { silentLogger } from '../runtime/logger.ts';
import { testQueues } from './support/engine-harness.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// Fair delivery across accounts, end to end: account A points several webhooks at a receiver that
// answers 200 only after 14 s (under the 15 s timeout), and has a backlog of events; account B has one
// webhook at a fast receiver. B's deliveries must arrive within a few seconds of their events while
// A's backlog is still draining. WEBHOOK_CONCURRENCY is 4 here, so before delivery was fair across
// accounts A's requests held every slot and B waited for one of them to end (14 s).

const SETTINGS: WebhookDeliverySettings = {
  timeoutMs: 15_000, allowPrivate: true, concurrency: 4, perAccountInFlight: 2, perWebhookInFlight: 2, maxConsecutiveFailures: 100,
  retryDelaysMs: [200, 200], fanOutPollMs: 50, sweepMs: 1_000,
};
const SLOW_MS = 14_000;
/** "A few seconds": B's deliveries take milliseconds when fair, 14 s when stuck behind A. */
const B_WITHIN_MS = 4_000;

/** A receiver that holds each request `holdMs` before answering 200, counting what it holds at once. */
async function receiver(holdMs: number) {
  const received: Array<{ id: string; at: number }> = [];
  const held = new Set<ServerResponse>();
  let maxHeld = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ id: String(req.headers['webhook-id']), at: Date.now() });
      if (holdMs === 0) return void res.writeHead(200).end();
      held.add(res);
      maxHeld = Math.max(maxHeld, held.size);
      const timer = setTimeout(() => answer(res), holdMs);
      res.on('close', () => clearTimeout(timer));
    });
  });
  const answer = (res: ServerResponse) => {
    held.delete(res);
    if (!res.writableEnded) res.writeHead(200).end();
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    received,
    get held() {
      return held.size;
    },
    get maxHeld() {
      return maxHeld;
    },
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    /** Answers everything held at once (the test is over), then stops. */
    async close() {
      for (const res of [...held]) answer(res);
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

let database: TestDatabase;
let queues: QueueBackend;
let queuePrefix: string;
let sequence = 0;

beforeAll(async () => {
  database = await openTestDatabase();
  ({ backend: queues, prefix: queuePrefix } = testQueues());
});
afterAll(async () => {
  await queues?.close();
  await database?.destroy();
});

/** An account with a user, a vehicle the user sees, and `hooks` webhooks at `url` for vehicle.ignition.on. */
async function tenant(url: string, hooks: number) {
  const make = fixtures(database.db);
  const account = await make.account();
  const user = await make.user(account.id);
  const device = await make.device(account.id, { userIds: [user.id] });
  const webhookIds: number[] = [];
  for (let i = 0; i < hooks; i++) {
    const row = await database.db
      .insertInto('webhooks')
      .values({ account_id: account.id, user_id: user.id, mode: 'live', url, events: ['vehicle.ignition.on'], description: null, secret: newWebhookSecret() })
      .returning('id')
      .executeTakeFirstOrThrow();
    webhookIds.push(row.id);
  }
  return { accountId: account.id, deviceId: device.id, webhookIds };
}

async function logEvents(deviceId: number, n: number): Promise<string[]> {
  const events = Array.from({ length: n }, () => ({
    type: 'vehicle.ignition.on' as const, occurredAt: new Date(), deviceId, data: {}, dedupeKey: `fairness-${process.pid}-${++sequence}`,
  }));
  return database.db.transaction().execute((trx) => appendEvents(trx, events));
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const pendingOf = async (webhookIds: number[]) =>
  (await database.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', 'in', webhookIds).where('status', '=', 'pending').execute()).length;

/**
 * A's backlog first, then B's events one by one while A's slow requests hold their slots: each of B's
 * must reach B's receiver within B_WITHIN_MS of its event.
 */
async function bStaysPrompt(processes: number) {
  const slow = await receiver(SLOW_MS);
  const fast = await receiver(0);
  const a = await tenant(slow.url, 3);
  const b = await tenant(fast.url, 1);
  const running: RunningWebhookDelivery[] = [];
  const extra: Array<() => Promise<void>> = [];
  try {
    running.push(await startWebhookDelivery(database, queues, silentLogger, SETTINGS));
    for (let i = 1; i < processes; i++) {
      // Another engine process: its own connection pool and queue client on PostgreSQL and Redis.
      const own: DatabaseHandle = database.env.DATABASE_URL
        ? await openDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: '', embedded: 'own' })
        : database;
      const ownQueues: QueueBackend = process.env.REDIS_URL ? bullmqQueues(process.env.REDIS_URL, { prefix: queuePrefix }) : inProcessQueues();
      running.push(await startWebhookDelivery(own, ownQueues, silentLogger, SETTINGS));
      extra.push(async () => {
        await ownQueues.close();
        if (own !== database) await own.close();
      });
    }
    // A's backlog: 3 webhooks × 8 events, far more than its slots send in the test's time.
    await logEvents(a.deviceId, 8);
    // A's requests hold its share of the slots in every process before B's first event.
    await until(() => slow.held >= SETTINGS.perAccountInFlight! * processes, 10_000);
    await new Promise((r) => setTimeout(r, 300));

    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      const before = fast.received.length;
      const [id] = await logEvents(b.deviceId, 1);
      const loggedAt = Date.now();
      await until(() => fast.received.length > before, B_WITHIN_MS + 6_000).catch(() => undefined);
      const got = fast.received.find((r) => r.id === id);
      delays.push(got ? got.at - loggedAt : Number.POSITIVE_INFINITY);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(delays.every((d) => d < B_WITHIN_MS), `B's delays ${delays.join(', ')} ms`).toBe(true);
    // A's backlog is still draining: B went through beside it, not after it.
    expect(await pendingOf(a.webhookIds)).toBeGreaterThan(0);
    // Each process kept A to its share of the slots.
    expect(slow.maxHeld).toBeLessThanOrEqual(SETTINGS.perAccountInFlight! * processes);
  } finally {
    await database.db.updateTable('webhooks').set({ enabled: false }).where('id', 'in', [...a.webhookIds, ...b.webhookIds]).execute();
    await slow.close();
    await fast.close();
    for (const r of running) await r.close();
    for (const close of extra) await close();
  }
}

describe('claiming deliveries fairly in the database', () => {
  it('leaves unclaimed what a process has no room for, and claims due ones a few per account in turn', async () => {
    const a = await tenant('http://127.0.0.1:9/a', 2);
    const b = await tenant('http://127.0.0.1:9/b', 1);
    try {
      // A's backlog logged first, then B's one event: fan-out claims only what the rooms give.
      await logEvents(a.deviceId, 10);
      await logEvents(b.deviceId, 1);
      const fanned = await fanOutEvents(database.db, 1_000, 60_000, { accounts: { [a.accountId]: 3 }, others: 5 });
      expect(fanned.deliveries.filter((d) => d.accountId === a.accountId)).toHaveLength(3);
      expect(fanned.deliveries.filter((d) => d.accountId === b.accountId)).toHaveLength(1);
      expect(fanned.unclaimed).toBe(17);
      // Due and unclaimed: B's second event comes after all of A's, yet is among the first claimed.
      await logEvents(b.deviceId, 1);
      expect((await fanOutEvents(database.db, 1_000, 60_000, { accounts: {}, others: 0 })).unclaimed).toBe(1);
      const first = await claimDueDeliveries(database.db, { claimMs: 60_000, limit: 2, rooms: { accounts: {}, others: 10 } });
      expect(first.deliveries.map((d) => d.accountId).sort()).toEqual([a.accountId, b.accountId].sort());
      expect(first.more).toBe(true);
      // An account without room is passed over; the claimed are not claimed twice.
      const second = await claimDueDeliveries(database.db, { claimMs: 60_000, limit: 100, rooms: { accounts: { [a.accountId]: 4 }, others: 0 } });
      expect(second.deliveries.map((d) => d.accountId)).toEqual([a.accountId, a.accountId, a.accountId, a.accountId]);
      expect(second.more).toBe(true);
      const rest = await claimDueDeliveries(database.db, { claimMs: 60_000, limit: 100, rooms: { accounts: {}, others: 100 } });
      expect(rest.deliveries).toHaveLength(17 - 1 - 4);
      expect(rest.more).toBe(false);
      const all = [...fanned.deliveries, ...first.deliveries, ...second.deliveries, ...rest.deliveries].map((d) => d.id);
      expect(new Set(all).size).toBe(all.length);
    } finally {
      await database.db.updateTable('webhooks').set({ enabled: false }).where('id', 'in', [...a.webhookIds, ...b.webhookIds]).execute();
    }
  });
});

describe('webhook delivery across accounts', () => {
  it('delivers another account\'s events within seconds while one account\'s slow receivers hold their slots', async () => {
    await bStaysPrompt(1);
  });

  it('stays fair with two engine processes claiming from the same database', async () => {
    await bStaysPrompt(2);
  });

  it('lends a busy account whose receiver answers fast the slots no other account wants, still leaving a share free', async () => {
    // 8 slots, 2 per account as of right: an account may borrow while 2 stay free (6 in flight, one webhook 5).
    const settings: WebhookDeliverySettings = { ...SETTINGS, concurrency: 8, perWebhookInFlight: 8 };
    const quick = await receiver(100);
    const sluggish = await receiver(1_500);
    const fast = await receiver(0);
    const q = await tenant(quick.url, 1);
    const s = await tenant(sluggish.url, 1);
    const b = await tenant(fast.url, 1);
    const running = await startWebhookDelivery(database, queues, silentLogger, settings);
    try {
      await logEvents(s.deviceId, 6);
      await logEvents(q.deviceId, 80);
      // The quick receiver gets more than its account's share at once...
      await until(() => quick.maxHeld >= 4, 10_000);
      // ...and another account still finds slots free at once.
      const [id] = await logEvents(b.deviceId, 1);
      const loggedAt = Date.now();
      await until(() => fast.received.some((r) => r.id === id), B_WITHIN_MS);
      expect(fast.received.find((r) => r.id === id)!.at - loggedAt).toBeLessThan(B_WITHIN_MS);
      await until(async () => (await pendingOf(q.webhookIds)) === 0, 20_000);
      expect(quick.maxHeld).toBeLessThanOrEqual(5);
      // The slow receiver (answers after more than a second) kept to its webhook's part of its share.
      expect(sluggish.maxHeld).toBe(1);
    } finally {
      await database.db.updateTable('webhooks').set({ enabled: false }).where('id', 'in', [...q.webhookIds, ...s.webhookIds, ...b.webhookIds]).execute();
      await quick.close();
      await sluggish.close();
      await fast.close();
      await running.close();
    }
  });
});
