import { serve, type ServerType } from '@hono/node-server';
import { EventSource } from 'eventsource';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../api/app.ts';
import { EventFeed } from '../api/events/event-feed.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { silentLogger } from '../runtime/logger.ts';
import { startEngineHarness, type EngineHarness } from './support/engine-harness.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';
import { TEST_CONFIG } from './support/test-app.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// A real tracker over TCP drives the engine; a browser-like EventSource on an HTTP server sees the
// enter moments after the fix; a second API process on the same database resumes the stream where the first
// left it.

const IMEI = '356307042449777';
const DEPOT = { lat: 19.4, lng: -99.1 };

let database: TestDatabase;
let harness: EngineHarness;
let key: string;
const servers: ServerType[] = [];
const feeds: EventFeed[] = [];

async function listen(app: App): Promise<string> {
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  servers.push(server);
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
}

/** Another API process: its own app and event feed on the same database. */
async function secondApi(): Promise<string> {
  const eventFeed = await EventFeed.open(database.db, silentLogger, database.pool, { pollMs: 250 });
  feeds.push(eventFeed);
  const app = createApp({ db: database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), eventFeed, config: TEST_CONFIG });
  return listen(app);
}

beforeAll(async () => {
  database = await openTestDatabase();
  harness = await startEngineHarness(database);
  const make = fixtures(database.db);
  const tenant = await make.tenant();
  key = tenant.key;
  await make.device(tenant.account.id, { imei: IMEI, name: 'Stream Van', userIds: [tenant.user.id] });
  await make.geofence(tenant.account.id, 'Depot', { kind: 'circle', lat: DEPOT.lat, lng: DEPOT.lng, radiusMeters: 300 });
});
afterAll(async () => {
  for (const server of servers) {
    server.close();
    (server as { closeAllConnections?: () => void }).closeAllConnections?.();
  }
  for (const feed of feeds) await feed.close();
  await harness?.close();
  await database?.destroy();
});

function collect(url: string, headers: Record<string, string>) {
  const received: Array<{ id: string; type: string; data: any; at: number }> = [];
  const source = new EventSource(url, { fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }) });
  for (const type of ['vehicle.geofence.enter', 'vehicle.geofence.exit']) {
    source.addEventListener(type, (e) => received.push({ id: e.lastEventId, type: e.type, data: JSON.parse(e.data as string), at: Date.now() }));
  }
  const opened = new Promise<void>((resolve, reject) => {
    source.addEventListener('open', () => resolve(), { once: true });
    source.addEventListener('error', (e) => reject(new Error(`stream: ${(e as any).code} ${(e as any).message}`)), { once: true });
  });
  return { source, received, opened };
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('the event stream behind a real tracker and the engine', () => {
  it('shows the enter live, moments after the fix, and a second API process resumes after Last-Event-ID', async () => {
    const first = await listen(harness.app);
    const auth = { Authorization: `Bearer ${key}` };
    const stream = collect(`${first}/events/stream?types=vehicle.geofence.*`, auth);
    await stream.opened;
    const tracker = await scriptedTracker(harness.teltonikaPort, IMEI);
    try {
      await tracker.report({ latitude: DEPOT.lat, longitude: DEPOT.lng - 0.02, speedKmh: 40 });
      const acknowledgedAt = Date.now();
      await tracker.report({ latitude: DEPOT.lat, longitude: DEPOT.lng, speedKmh: 40 });
      await until(() => stream.received.length === 1, 5_000);
      // From the tracker's acknowledgement (the fix committed) through the engine to the client: live,
      // not at a later refresh. Typical latency (tens of ms) is measured by `npm run bench -- events`;
      // the bound here leaves room for a loaded CI machine.
      expect(stream.received[0]!.at - acknowledgedAt).toBeLessThan(3_000);
      expect(stream.received[0]!.data).toMatchObject({ type: 'vehicle.geofence.enter', data: { vehicle: { name: 'Stream Van', imei: IMEI }, geofence: { name: 'Depot' } } });
      stream.source.close();

      // While nobody listens, the van leaves and comes back.
      await tracker.report({ latitude: DEPOT.lat, longitude: DEPOT.lng + 0.02, speedKmh: 40 });
      await tracker.report({ latitude: DEPOT.lat, longitude: DEPOT.lng, speedKmh: 40 });
      const logged = async () => ((await (await harness.app.request('/api/v1/events?types=vehicle.geofence.*&order=asc', { headers: auth })).json()) as any).data;
      for (let i = 0; i < 100 && (await logged()).length < 3; i++) await new Promise((r) => setTimeout(r, 100));
      const missed = (await logged()).slice(1);
      expect(missed.map((e: any) => e.type)).toEqual(['vehicle.geofence.exit', 'vehicle.geofence.enter']);

      const second = await secondApi();
      const resumed = collect(`${second}/events/stream?types=vehicle.geofence.*`, { ...auth, 'Last-Event-ID': stream.received[0]!.id });
      await resumed.opened;
      await until(() => resumed.received.length === 2, 5_000);
      expect(resumed.received.map((e) => e.id)).toEqual(missed.map((e: any) => e.id));
      resumed.source.close();
    } finally {
      tracker.close();
    }
  }, 60_000);
});
