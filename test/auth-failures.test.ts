import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { createRedisRateLimiter } from '../api/rate-limit/redis-rate-limiter.ts';
import { connectRedis } from '../cli/redis-connection.ts';
import { silentLogger } from '../runtime/logger.ts';
import { serveOverHttp } from './support/http-server.ts';
import { startTestApp, TEST_CONFIG, type TestApp } from './support/test-app.ts';

// Guessing credentials is slowed per client address: 20 answers of 401 in the window, then 429 for
// everything from that address, good keys included, until the window frees; over real HTTP, since
// the address is the socket's.

let t: TestApp;
let http: { url: string; close(): Promise<void> };
let key: string;
const WINDOW_MS = 2_000;

beforeAll(async () => {
  t = await startTestApp({ authFailureLimit: 20, authFailureWindowMs: WINDOW_MS });
  http = await serveOverHttp(t.app);
  key = (await t.fixtures.tenant()).key;
});
afterAll(async () => {
  await http?.close();
  await t?.close();
});

const status = async (url: string, credential: string) => (await fetch(`${url}/api/v1/devices/status`, { headers: { Authorization: `Bearer ${credential}` } })).status;

describe('failed authentications from one address', () => {
  it('are answered 429 with Retry-After after 20 in the window, whatever is sent, until the window frees', async () => {
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    expect(await status(http.url, key)).toBe(200);
    for (let i = 0; i < 15; i++) expect(await status(http.url, `fc_live_${'x'.repeat(32)}`)).toBe(401);
    // OAuth client authentication failures count too.
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${http.url}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from('fcc_guess:wrong').toString('base64')}` },
        body: 'grant_type=client_credentials',
      });
      expect(res.status).toBe(401);
    }
    const blocked = await fetch(`${http.url}/api/v1/devices/status`, { headers: { Authorization: `Bearer ${key}` } });
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await blocked.json()) as any).error).toMatch(/^Too many failed authentications from 127\.0\.0\.1: 20 in a minute/);
    const token = await fetch(`${http.url}/oauth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
    expect(token.status).toBe(429);
    await new Promise((r) => setTimeout(r, WINDOW_MS + 200));
    expect(await status(http.url, key)).toBe(200);
  });

  it('do not count successful requests or other errors', async () => {
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    for (let i = 0; i < 30; i++) expect(await status(http.url, key)).toBe(200);
    for (let i = 0; i < 25; i++) expect((await fetch(`${http.url}/api/v1/devices/000/status`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(404);
    expect(await status(http.url, key)).toBe(200);
  });
});

describe.skipIf(!process.env.REDIS_URL)('failed authentications with Redis', () => {
  it('are counted across API processes', async () => {
    const redis = await connectRedis(process.env.REDIS_URL!);
    const prefix = `fleetcore-test-${process.pid}-${Date.now()}:shared-failures:`;
    const limiters = [createRedisRateLimiter(redis, 20, 60_000, prefix), createRedisRateLimiter(redis, 20, 60_000, prefix)];
    const apps = limiters.map((authFailureLimiter) =>
      createApp({ db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), config: TEST_CONFIG, authFailureLimiter }),
    );
    const servers = await Promise.all(apps.map(serveOverHttp));
    try {
      for (let i = 0; i < 20; i++) expect(await status(servers[i % 2]!.url, 'fc_live_nope')).toBe(401);
      expect(await status(servers[0]!.url, key)).toBe(429);
      expect(await status(servers[1]!.url, key)).toBe(429);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
      redis.disconnect();
    }
  });
});
