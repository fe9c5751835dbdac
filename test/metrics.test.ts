import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import { teltonikaCodec8 } from '../simulators/teltonika-packets.ts';
import { eventually } from './support/eventually.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { freePort, freshDatabase, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { parsePrometheusText, sampleValue, type Sample } from './support/prometheus-text.ts';
import { rawTracker } from './support/raw-tracker.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';

/**
 * GET /metrics and the request-id logs of a real `fleet serve`, fed by real tracker sockets and HTTP
 * requests: each figure below moves because of something the test did, by the amount it did.
 */
const IMEI = '356307042449001';
let fresh: FreshDatabase;
let server: Serving;
let key: string;
let trackerPort: number;

async function scrape(url: string, token?: string): Promise<Sample[]> {
  const response = await fetch(`${url}/metrics`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await response.text());
}

beforeAll(async () => {
  fresh = await freshDatabase();
  const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.dataDir ?? '', embedded: 'own' });
  const make = fixtures(setup.db);
  const tenant = await make.tenant();
  key = tenant.key;
  await make.device(tenant.account.id, { imei: IMEI, userIds: [tenant.user.id] });
  await setup.close();
  trackerPort = await freePort();
  server = await serve({
    ...fresh.env, PORT: '0', TELTONIKA_PORT: String(trackerPort), LOG_LEVEL: 'info', RATE_LIMIT_MAX: '3', DEMO_SIMULATE: 'false',
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
  });
}, 180_000);

afterAll(async () => {
  server?.process.kill('SIGTERM');
  await server?.exited;
  await fresh?.destroy();
});

describe('GET /metrics', () => {
  it('counts what the tracker side did, per protocol', async () => {
    const before = await scrape(server.url);
    const tracker = await scriptedTracker(trackerPort, IMEI);
    const start = Date.now() - 60_000;
    for (let i = 0; i < 3; i++) await tracker.report({ latitude: 19.4 + i / 1000, longitude: -99.1, time: new Date(start + i * 1000) });
    const open = await scrape(server.url);
    expect(sampleValue(open, 'fleetcore_tracker_connections', { protocol: 'teltonika' })).toBe(1);
    tracker.close();

    const stranger = await rawTracker(trackerPort);
    stranger.send(Buffer.concat([Buffer.from([0x00, 0x0f]), Buffer.from('359999999999999')]));
    expect((await stranger.read(1))[0]).toBe(0);
    const garbage = await rawTracker(trackerPort);
    garbage.send(Buffer.from([0x00, 0x0f, ...Buffer.from(IMEI)]));
    await garbage.read(1);
    const corrupted = Buffer.from(teltonikaCodec8([{ latitude: 19.4, longitude: -99.1, speedKmh: 0, heading: 0, satellites: 9, ignition: true, time: new Date(start) }]));
    corrupted[corrupted.length - 1]! ^= 0xff; // the CRC no longer matches
    garbage.send(corrupted);
    expect(await garbage.closedByServer()).toBe(true);

    const after = await eventually(
      () => scrape(server.url),
      (s) => expect(sampleValue(s, 'fleetcore_tracker_connections', { protocol: 'teltonika' })).toBe(0),
    );
    const delta = (name: string, labels: Record<string, string> = {}) => (sampleValue(after, name, labels) ?? 0) - (sampleValue(before, name, labels) ?? 0);
    const teltonika = { protocol: 'teltonika' };
    expect(delta('fleetcore_positions_decoded_total', teltonika)).toBe(3);
    expect(delta('fleetcore_positions_stored_total', teltonika)).toBe(3);
    expect(delta('fleetcore_unknown_devices_total', teltonika)).toBe(1);
    expect(delta('fleetcore_malformed_frames_total', teltonika)).toBe(1);
    expect(delta('fleetcore_tracker_connections_opened_total', teltonika)).toBe(3);
    // Three fix frames and two logins were answered.
    expect(delta('fleetcore_ack_latency_seconds_count', teltonika)).toBe(5);
    expect(delta('fleetcore_group_commit_batch_rows_sum')).toBeGreaterThanOrEqual(3);
    expect(delta('fleetcore_group_commit_seconds_count')).toBeGreaterThanOrEqual(1);
    await eventually(
      () => scrape(server.url),
      (s) => expect(sampleValue(s, 'fleetcore_engine_jobs_total', { name: 'devices', outcome: 'completed' })).toBeGreaterThanOrEqual(1),
    );
  });

  it('counts HTTP requests by route pattern and status, and rate-limit refusals', async () => {
    const before = await scrape(server.url);
    const auth = { Authorization: `Bearer ${key}` };
    // RATE_LIMIT_MAX=3 on the detailed endpoints: the fourth is refused.
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await fetch(`${server.url}/api/v1/devices/${IMEI}/status`, { headers: auth })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await fetch(`${server.url}/api/v1/vehicles`, { headers: { Authorization: 'Bearer fc_live_wrong' } })).status).toBe(401);
    const after = await scrape(server.url);
    const delta = (name: string, labels: Record<string, string>) => (sampleValue(after, name, labels) ?? 0) - (sampleValue(before, name, labels) ?? 0);
    const route = '/api/v1/devices/:deviceId/status';
    expect(delta('fleetcore_http_requests_total', { method: 'GET', route, status: '200' })).toBe(3);
    expect(delta('fleetcore_http_requests_total', { method: 'GET', route, status: '429' })).toBe(1);
    expect(delta('fleetcore_http_requests_total', { method: 'GET', route: '/api/v1/vehicles', status: '401' })).toBe(1);
    expect(delta('fleetcore_http_request_duration_seconds_count', { method: 'GET', route })).toBe(4);
    expect(delta('fleetcore_rate_limit_refusals_total', { limit: 'detailed' })).toBe(1);
    // No raw path (with its IMEI) ever becomes a label value.
    expect(after.some((s) => Object.values(s.labels).some((v) => v.includes(IMEI)))).toBe(false);
  });

  it('shows the database pool, the queues, the engine lag and Node’s own metrics', async () => {
    const samples = await scrape(server.url);
    expect(sampleValue(samples, 'fleetcore_db_pool_max_connections')).toBeGreaterThan(0);
    expect(sampleValue(samples, 'fleetcore_db_pool_connections', { state: 'idle' })).toBeGreaterThanOrEqual(0);
    expect(sampleValue(samples, 'fleetcore_queue_jobs', { queue: 'fleetcore-engine', state: 'waiting' })).toBeGreaterThanOrEqual(0);
    expect(samples.filter((s) => s.name === 'fleetcore_engine_lag_seconds')).toHaveLength(1);
    expect(sampleValue(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sampleValue(samples, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
  });
});

describe('request ids', () => {
  it('keeps a caller’s x-request-id, returns it, and logs the request line with it', async () => {
    const response = await fetch(`${server.url}/api/v1/vehicles`, { headers: { Authorization: `Bearer ${key}`, 'x-request-id': 'trace-42.a' } });
    expect(response.headers.get('x-request-id')).toBe('trace-42.a');
    const line = await eventually(
      async () => server.output().split('\n').filter((l) => l.includes('"requestId":"trace-42.a"')),
      (lines) => expect(lines).toHaveLength(1),
    );
    expect(JSON.parse(line[0]!)).toMatchObject({ level: 'info', msg: 'http request', method: 'GET', path: '/api/v1/vehicles', route: '/api/v1/vehicles', status: 200 });
  });

  it('gives a request without a usable id a new one, never echoing what it sent', async () => {
    for (const offered of [undefined, 'has spaces in it', 'x'.repeat(129)]) {
      const response = await fetch(`${server.url}/healthz`, { headers: offered ? { 'x-request-id': offered } : {} });
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it('never logs a query string (stream tokens travel in it)', async () => {
    await fetch(`${server.url}/api/v1/events/stream?token=fc_st_secretvalue`);
    await eventually(async () => server.output(), (out) => expect(out).toMatch(/"path":"\/api\/v1\/events\/stream"/));
    expect(server.output()).not.toContain('fc_st_secretvalue');
  });
});

/**
 * `--processes 2`: a scrape reaches one worker, yet shows both processes, as does METRICS_PORT, held
 * by the cluster's primary.
 */
describe.skipIf(!process.env.DATABASE_URL || !process.env.REDIS_URL)('metrics of a cluster', () => {
  it('aggregates every process, on the API port and on METRICS_PORT', async () => {
    const cluster = await freshDatabase();
    const metricsPort = await freePort();
    const token = 'cluster-scrape-token-42';
    const serving = await serve({ ...cluster.env, REDIS_URL: process.env.REDIS_URL!, PORT: '0', METRICS_PORT: String(metricsPort), METRICS_TOKEN: token }, /listening on http/, [
      '--processes', '2',
    ]);
    try {
      const both = Date.now() + 60_000;
      while ((serving.output().match(/API listening on/g) ?? []).length < 2 && Date.now() < both) await new Promise((r) => setTimeout(r, 100));
      const processes = (samples: Sample[]) => new Set(samples.filter((s) => s.name === 'fleetcore_engine_lag_seconds').map((s) => s.labels.process));
      // METRICS_TOKEN holds on the primary's port: no token, no metrics.
      expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(401);
      const viaPort = await scrape(`http://127.0.0.1:${metricsPort}`, token);
      expect(processes(viaPort).size).toBe(2);
      // The API port no longer serves it when METRICS_PORT does.
      expect((await fetch(`${serving.url}/metrics`)).status).toBe(404);
      // Both workers' HTTP counters arrive summed.
      for (let i = 0; i < 10; i++) await fetch(`${serving.url}/healthz`, { headers: { Connection: 'close' } });
      const summed = await scrape(`http://127.0.0.1:${metricsPort}`, token);
      expect(sampleValue(summed, 'fleetcore_http_requests_total', { route: '/healthz', status: '200' })).toBe(10);
    } finally {
      serving.process.kill('SIGTERM');
      await serving.exited;
      await cluster.destroy();
    }
  }, 180_000);

  it('answers a scrape on the API port of a cluster worker with every process, behind METRICS_TOKEN', async () => {
    const cluster = await freshDatabase();
    const token = 'worker-scrape-token-42';
    const serving = await serve({ ...cluster.env, REDIS_URL: process.env.REDIS_URL!, PORT: '0', METRICS_TOKEN: token }, /listening on http/, ['--processes', '2']);
    try {
      const both = Date.now() + 60_000;
      while ((serving.output().match(/API listening on/g) ?? []).length < 2 && Date.now() < both) await new Promise((r) => setTimeout(r, 100));
      expect((await fetch(`${serving.url}/metrics`)).status).toBe(401);
      const samples = await scrape(serving.url, token);
      expect(new Set(samples.filter((s) => s.name === 'fleetcore_engine_lag_seconds').map((s) => s.labels.process)).size).toBe(2);
    } finally {
      serving.process.kill('SIGTERM');
      await serving.exited;
      await cluster.destroy();
    }
  }, 180_000);
});
