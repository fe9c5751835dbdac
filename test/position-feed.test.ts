import { serve, type ServerType } from '@hono/node-server';
import { EventSource } from 'eventsource';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { EventFeed } from '../api/events/event-feed.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { publishCommittedFixes, type PositionFeed } from '../domain/events/position-feed.ts';
import type { QueueBackend } from '../engine/queue/job-queue.ts';
import { PositionWebhookSender } from '../engine/webhooks/position-webhooks.ts';
import { startWebhookDelivery, type RunningWebhookDelivery } from '../engine/webhooks/start-webhook-delivery.ts';
import { LocalPositionFeed } from '../ingest/position-feed/local-position-feed.ts';
import { RedisPositionFeed } from '../ingest/position-feed/redis-position-feed.ts';
import { startIngest, type RunningIngest } from '../ingest/start-ingest.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { testQueues } from './support/engine-harness.ts';
import { freePort } from './support/fleet-process.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';
import { TEST_CONFIG } from './support/test-app.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// vehicle.position end to end: real trackers over TCP, ingest's commits, a webhook receiver that
// verifies every request with the standardwebhooks package, and EventSource clients on the real HTTP
// API. With REDIS_URL the stream's API reads the feed through Redis, as an API process apart from the
// ingest process does; without it, in process.

const A1 = '356307042448801';
const A2 = '356307042448802';
const B1 = '356307042448803';
/** Account A's user's vehicle in test mode: A's live key and webhooks never see it. */
const A_TEST = '356307042448804';

let database: TestDatabase;
let queues: QueueBackend;
let delivery: RunningWebhookDelivery;
let ingest: RunningIngest;
let sender: PositionWebhookSender;
let eventFeed: EventFeed;
let http: ServerType;
let receiver: Server;
let api: string;
let hookBase: string;
const feeds: { ingest: PositionFeed; api: PositionFeed; close(): void } = { ingest: undefined!, api: undefined!, close: () => undefined };
const keys: Record<'a' | 'b', string> = { a: '', b: '' };
const secrets = new Map<string, string>();
/** What each receiver path got, verified: the body's `data`, its type and its webhook-id. */
const received = new Map<string, Array<{ id: string; type: string; data: any }>>();

beforeAll(async () => {
  database = await openTestDatabase();
  const make = fixtures(database.db);
  const a = await make.tenant();
  const b = await make.tenant();
  keys.a = a.key;
  keys.b = b.key;
  await make.device(a.account.id, { imei: A1, name: 'Feed Van 1', plates: 'FV-1', userIds: [a.user.id] });
  await make.device(a.account.id, { imei: A2, name: 'Feed Van 2', plates: 'FV-2', userIds: [a.user.id] });
  await make.device(b.account.id, { imei: B1, name: 'Other Van', plates: 'OV-1', userIds: [b.user.id] });
  await make.device(a.account.id, { imei: A_TEST, name: 'Test Van', plates: 'TV-1', mode: 'test', userIds: [a.user.id] });

  if (process.env.REDIS_URL) {
    const channel = `fc-test-${process.pid}-${randomBytes(4).toString('hex')}:positions`;
    const connections = [new Redis(process.env.REDIS_URL), new Redis(process.env.REDIS_URL)];
    const ingestSide = new RedisPositionFeed(connections[0]!, silentLogger, channel);
    const apiSide = new RedisPositionFeed(connections[1]!, silentLogger, channel);
    await apiSide.ready();
    Object.assign(feeds, { ingest: ingestSide, api: apiSide, close: () => {
      for (const f of [ingestSide, apiSide]) f.close();
      for (const c of connections) c.disconnect();
    } });
  } else {
    const local = new LocalPositionFeed();
    Object.assign(feeds, { ingest: local, api: local });
  }

  queues = testQueues().backend;
  delivery = await startWebhookDelivery(database, queues, silentLogger, {
    timeoutMs: 5_000, allowPrivate: true, concurrency: 4, perWebhookInFlight: 2, maxConsecutiveFailures: 50, retryDelaysMs: [200], fanOutPollMs: 50, sweepMs: 500,
  });
  sender = new PositionWebhookSender(database.db, silentLogger, { timeoutMs: 5_000, allowPrivate: true, batchSize: 4, inFlight: 2, maxQueued: 10_000, refreshMs: 60_000 });
  await sender.start();
  ingest = await startIngest(database, silentLogger, {
    host: '127.0.0.1', ports: { teltonika: await freePort() }, osmandPort: 0,
    limits: { idleTimeoutMs: 60_000, maxBufferedBytes: 1 << 20 }, batchRows: 1000, batchDelayMs: 2,
    onDevicesUpdated: () => undefined,
    onFixesCommitted: (fixes) => publishCommittedFixes({ webhooks: sender, feed: feeds.ingest }, fixes),
  });

  eventFeed = await EventFeed.open(database.db, silentLogger, database.pool, { pollMs: 100 });
  const app = createApp({ db: database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), eventFeed, positionFeed: feeds.api, config: TEST_CONFIG });
  http = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => http.once('listening', () => resolve()));
  api = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/v1`;

  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url!;
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        const payload = new Webhook(secrets.get(path)!).verify(body, req.headers as IncomingHttpHeaders & Record<string, string>) as { type: string; data: any };
        received.set(path, [...(received.get(path) ?? []), { id: String(req.headers['webhook-id']), type: payload.type, data: payload.data }]);
        res.writeHead(204).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  http?.close();
  (http as { closeAllConnections?: () => void } | undefined)?.closeAllConnections?.();
  await ingest?.close();
  sender?.close();
  await eventFeed?.close();
  await delivery?.close();
  await queues?.close();
  feeds.close();
  receiver?.close();
  receiver?.closeAllConnections();
  await database?.destroy();
});

async function register(key: string, path: string, events: string[]): Promise<void> {
  const res = await fetch(`${api}/webhooks`, {
    method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ url: `${hookBase}${path}`, events }),
  });
  expect(res.status).toBe(201);
  secrets.set(path, ((await res.json()) as any).data.secret);
}

function stream(key: string, types: string) {
  const messages: Array<{ type: string; lastEventId: string; data: any }> = [];
  const source = new EventSource(`${api}/events/stream?types=${types}`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${key}` } }),
  });
  for (const type of ['vehicle.position', 'device.online', 'device.offline']) {
    source.addEventListener(type, (e) => messages.push({ type: e.type, lastEventId: e.lastEventId, data: JSON.parse(e.data as string) }));
  }
  const opened = new Promise<void>((resolve, reject) => {
    source.addEventListener('open', () => resolve(), { once: true });
    source.addEventListener('error', (e) => reject(new Error(`stream: ${(e as any).code} ${(e as any).message}`)), { once: true });
  });
  return { source, messages, opened };
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The stored fixes of these IMEIs, as the ids their positions carry, in fix-time order per vehicle. */
async function storedIds(imeis: string[]): Promise<string[]> {
  const rows = await database.db.selectFrom('positions as p').innerJoin('devices as d', 'd.id', 'p.device_id')
    .select(['d.imei', 'p.fix_time']).where('d.imei', 'in', imeis).orderBy('d.imei').orderBy('p.fix_time').execute();
  return rows.map((r) => `pos_${r.imei}_${r.fix_time.getTime()}`);
}

const byVehicle = (ids: string[]) => {
  const out: Record<string, string[]> = {};
  for (const id of ids) (out[id.split('_')[1]!] ??= []).push(id);
  return out;
};

describe('vehicle.position', () => {
  it('reaches every webhook and stream that names it, each stored fix once, in fix-time order per vehicle, and nobody else', async () => {
    await register(keys.a, '/a-positions', ['vehicle.position']);
    await register(keys.a, '/a-everything', ['*']);
    await register(keys.a, '/a-vehicle-family', ['vehicle.*', 'device.*']);
    await register(keys.b, '/b-positions', ['vehicle.position']);
    await sender.refresh();
    const aPositions = stream(keys.a, 'vehicle.position');
    const aEverything = stream(keys.a, '*');
    const bPositions = stream(keys.b, 'vehicle.position');
    await Promise.all([aPositions.opened, aEverything.opened, bPositions.opened]);

    const start = Math.floor(Date.now() / 1000) * 1000 - 600_000;
    const at = (s: number) => new Date(start + s * 1000);
    const trackers = await Promise.all([A1, A2, B1, A_TEST].map((imei) => scriptedTracker(ingest.listeners[0]!.port, imei)));
    try {
      const [a1, a2, b1, aTest] = trackers;
      await aTest!.report({ time: at(1), latitude: 19.6, longitude: -99.3 });
      // A frame whose records are out of fix-time order, then single fixes and another frame, both vans at once.
      await Promise.all([
        a1!.reportAll([at(3), at(1), at(2)].map((time, i) => ({ time, latitude: 19.4 + i / 1000, longitude: -99.1 }))),
        a2!.reportAll([at(2), at(1)].map((time) => ({ time, latitude: 19.5, longitude: -99.2 }))),
      ]);
      for (let s = 4; s <= 9; s++) await Promise.all([a1!.report({ time: at(s), latitude: 19.41, longitude: -99.1, speedKmh: 30 + s }), a2!.report({ time: at(s), latitude: 19.51, longitude: -99.2 })]);
      await a1!.reportAll([at(10), at(11), at(12), at(13), at(14)].map((time) => ({ time, latitude: 19.42, longitude: -99.1 })));
      await b1!.report({ time: at(5), latitude: 20, longitude: -100 });
    } finally {
      for (const t of trackers) t.close();
    }

    expect(await storedIds([A_TEST])).toHaveLength(1); // stored, and seen by nobody below
    const stored = await storedIds([A1, A2]);
    expect(stored).toHaveLength(3 + 2 + 6 * 2 + 5);
    const hooked = () => (received.get('/a-positions') ?? []).flatMap((r) => r.data.events as any[]);
    await until(() => hooked().length >= stored.length && aPositions.messages.length >= stored.length);
    await new Promise((r) => setTimeout(r, 500)); // anything more would be a duplicate

    for (const ids of [hooked().map((e) => e.id), aPositions.messages.map((m) => m.data.id)]) {
      expect([...ids].sort()).toEqual([...stored].sort()); // every stored fix, once
      const mine = byVehicle(ids);
      for (const [imei, inOrder] of Object.entries(byVehicle(stored))) expect(mine[imei]).toEqual(inOrder); // fix-time order per vehicle
    }
    // Batches of at most 4 (this test's batch size), each its own signed request with its own webhook-id.
    const requests = received.get('/a-positions')!;
    expect(requests.every((r) => r.type === 'vehicle.position' && r.data.events.length >= 1 && r.data.events.length <= 4)).toBe(true);
    expect(new Set(requests.map((r) => r.id)).size).toBe(requests.length);
    const first = hooked().find((e) => e.id === `pos_${A1}_${at(4).getTime()}`);
    expect(first).toMatchObject({
      type: 'vehicle.position', timestamp: at(4).toISOString(),
      data: { vehicle: { id: A1, name: 'Feed Van 1', plates: 'FV-1', imei: A1 }, position: { lat: 19.41, lng: -99.1, speedKmh: 34, heading: 90, fixTime: at(4).toISOString(), satellites: 9, valid: true, ignition: true } },
    });
    // The stream's position messages carry no id: line; the client's Last-Event-ID stays the log's.
    expect(aPositions.messages.every((m) => m.type === 'vehicle.position' && m.lastEventId === '')).toBe(true);

    // Another account's webhook and stream get that account's vehicle only.
    await until(() => (received.get('/b-positions') ?? []).length >= 1 && bPositions.messages.length >= 1);
    expect((received.get('/b-positions') ?? []).flatMap((r) => r.data.events).map((e: any) => e.id)).toEqual([`pos_${B1}_${at(5).getTime()}`]);
    expect(bPositions.messages.map((m) => m.data.id)).toEqual([`pos_${B1}_${at(5).getTime()}`]);

    // `*` and `vehicle.*` subscribers get the other events (the trackers' device.online, logged) but no position.
    await until(() => (received.get('/a-everything') ?? []).length >= 2 && (received.get('/a-vehicle-family') ?? []).length >= 2 && aEverything.messages.length >= 2);
    for (const path of ['/a-everything', '/a-vehicle-family']) {
      const bodies = received.get(path)!;
      expect(bodies.some((r) => r.type === 'device.online')).toBe(true);
      expect(bodies.some((r) => r.type === 'vehicle.position' || 'events' in r.data)).toBe(false);
    }
    expect(aEverything.messages.some((m) => m.type === 'device.online')).toBe(true);
    expect(aEverything.messages.some((m) => m.type === 'vehicle.position')).toBe(false);
    for (const s of [aPositions, aEverything, bPositions]) s.source.close();
  }, 90_000);

  it('reaches a stream when no webhook takes positions, and is not built while nothing takes it', async () => {
    await database.db.deleteFrom('webhooks').execute();
    await sender.refresh();
    expect(sender.wanted).toBe(false);
    const positions = stream(keys.a, 'vehicle.position');
    await positions.opened;
    expect(feeds.ingest.wanted()).toBe(true);
    const time = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    const tracker = await scriptedTracker(ingest.listeners[0]!.port, A2);
    try {
      await tracker.report({ time, latitude: 19.52, longitude: -99.2 });
    } finally {
      tracker.close();
    }
    await until(() => positions.messages.some((m) => m.data.id === `pos_${A2}_${time.getTime()}`));
    positions.source.close();
    if (!process.env.REDIS_URL) await until(() => !feeds.ingest.wanted());
  }, 30_000);
});
