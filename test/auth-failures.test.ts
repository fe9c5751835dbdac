import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { createRedisRateLimiter } from '../api/rate-limit/redis-rate-limiter.ts';
import { connectRedis } from '../cli/redis-connection.ts';
import { TrustedProxies } from '../api/trusted-proxies.ts';
import { silentLogger } from '../runtime/logger.ts';
import { serveOverHttp } from './support/http-server.ts';
import { startTestApp, TEST_CONFIG, type TestApp } from './support/test-app.ts';

// Guessing credentials is slowed per client address: 20 answers of 401 in the window, then 429
// for that address's failing requests until the window frees, while valid credentials from the same
// address (colleagues behind one proxy or NAT) go on working; over real HTTP, since the address is
// the socket's, or the one a trusted proxy names.

let t: TestApp;
let http: { url: string; close(): Promise<void> };
let key: string;
let userId: number;
const WINDOW_MS = 2_000;

beforeAll(async () => {
  t = await startTestApp({ authFailureLimit: 20, authFailureWindowMs: WINDOW_MS });
  http = await serveOverHttp(t.app);
  const tenant = await t.fixtures.tenant();
  key = tenant.key;
  userId = tenant.user.id;
});
afterAll(async () => {
  await http?.close();
  await t?.close();
});

const request = (url: string, credential: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/api/v1/devices/status`, { headers: { Authorization: `Bearer ${credential}`, ...headers } });
const status = async (url: string, credential: string, headers: Record<string, string> = {}) => (await request(url, credential, headers)).status;
const BAD_KEY = `fc_live_${'x'.repeat(32)}`;
const tokenRequest = (url: string, basic: string) =>
  fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(basic).toString('base64')}` },
    body: 'grant_type=client_credentials',
  });

describe('failed authentications from one address', () => {
  it('turn that address\'s failing requests into 429 with Retry-After after 20 in the window, and never refuse a valid credential', async () => {
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    const admin = (await t.fixtures.key(userId, { permissions: ['*', 'keys:write'] })).key;
    const client = (await t.json('/api/v1/oauth-clients', { key: admin, method: 'POST', body: { scopes: ['devices:read'] } })).body.data;
    expect(await status(http.url, key)).toBe(200);
    for (let i = 0; i < 15; i++) expect(await status(http.url, BAD_KEY)).toBe(401);
    // OAuth client authentication failures count too.
    for (let i = 0; i < 5; i++) expect((await tokenRequest(http.url, 'fcc_guess:wrong')).status).toBe(401);

    const blocked = await request(http.url, BAD_KEY);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await blocked.json()) as any).error).toMatch(/^Too many failed authentications from 127\.0\.0\.1: 20 in a minute/);
    const guessedSecret = await tokenRequest(http.url, `${client.clientId}:wrong`);
    expect(guessedSecret.status).toBe(429);
    expect(((await guessedSecret.json()) as any).error).toBe('invalid_client');
    // The same address with valid credentials: a key, and a client asking for a token.
    expect(await status(http.url, key)).toBe(200);
    const token = await tokenRequest(http.url, `${client.clientId}:${client.clientSecret}`);
    expect(token.status).toBe(200);
    expect(await status(http.url, ((await token.json()) as any).access_token)).toBe(200);

    await new Promise((r) => setTimeout(r, WINDOW_MS + 200));
    expect(await status(http.url, BAD_KEY)).toBe(401);
  });

  it('do not count successful requests or other errors', async () => {
    await new Promise((r) => setTimeout(r, WINDOW_MS));
    for (let i = 0; i < 30; i++) expect(await status(http.url, key)).toBe(200);
    for (let i = 0; i < 25; i++) expect((await fetch(`${http.url}/api/v1/devices/000/status`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(404);
    expect(await status(http.url, BAD_KEY)).toBe(401);
  });
});

describe('behind a proxy named in TRUST_PROXY', () => {
  it('are counted per client the proxy names, and the audit log records that client; an untrusted peer\'s header is ignored', async () => {
    const limiter = createMemoryRateLimiter(3, 60_000);
    const proxied = createApp({
      db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), config: TEST_CONFIG,
      authFailureLimiter: limiter, trustedProxies: new TrustedProxies(['127.0.0.1']),
    });
    const server = await serveOverHttp(proxied);
    const untrusted = await serveOverHttp(createApp({
      db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), config: TEST_CONFIG,
      authFailureLimiter: createMemoryRateLimiter(3, 60_000),
    }));
    try {
      const from = (address: string) => ({ 'X-Forwarded-For': `203.0.113.250, ${address}` });
      for (let i = 0; i < 3; i++) expect(await status(server.url, BAD_KEY, from('198.51.100.7'))).toBe(401);
      const refused = await request(server.url, BAD_KEY, from('198.51.100.7'));
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as any).error).toMatch(/from 198\.51\.100\.7:/);
      // Another client behind the same proxy is not the guesser.
      expect(await status(server.url, BAD_KEY, from('198.51.100.8'))).toBe(401);

      const admin = (await t.fixtures.key(userId, { permissions: ['*', 'keys:write', 'audit:read'] })).key;
      const minted = await fetch(`${server.url}/api/v1/api-keys`, {
        method: 'POST', headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json', ...from('198.51.100.9') }, body: JSON.stringify({ permissions: ['devices:read'] }),
      });
      const id = String(((await minted.json()) as any).data.id);
      const audit = await t.json('/api/v1/audit?action=api_key.created&limit=50', { key: admin });
      expect(audit.body.data.find((e: any) => e.target.id === id).address).toBe('198.51.100.9');

      // A server that trusts no proxy counts the socket's address whatever the header says.
      for (let i = 0; i < 3; i++) expect(await status(untrusted.url, BAD_KEY, from(`198.51.100.${20 + i}`))).toBe(401);
      expect(await status(untrusted.url, BAD_KEY, from('198.51.100.30'))).toBe(429);
    } finally {
      await server.close();
      await untrusted.close();
    }
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
      expect(await status(servers[0]!.url, 'fc_live_nope')).toBe(429);
      expect(await status(servers[1]!.url, 'fc_live_nope')).toBe(429);
      expect(await status(servers[1]!.url, key)).toBe(200);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
      redis.disconnect();
    }
  });
});
