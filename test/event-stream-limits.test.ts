import { EventSource } from 'eventsource';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { EventFeed } from '../api/events/event-feed.ts';
import { RedisStreamLeases } from '../api/events/redis-stream-leases.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { revokeApiKey } from '../db/api-keys.ts';
import { appendEvents } from '../db/event-log.ts';
import type { NewEvent } from '../domain/events/event-payloads.ts';
import { silentLogger } from '../runtime/logger.ts';
import { eventually } from './support/eventually.ts';
import { serveOverHttp } from './support/http-server.ts';
import { deleteRedisKeys } from './support/redis-keys.ts';
import { startTestApp, TEST_CONFIG, type TestApp } from './support/test-app.ts';

// Event streams are bounded: so many open per credential, closed within seconds of the credential's
// revocation or expiry, closed at their maximum life (and resumed by the client with nothing lost),
// and each stream token opens one stream. Everything runs through real HTTP servers.

/** The requirement: a stream of a revoked or expired credential is closed within this. */
const REVOCATION_BOUND_MS = 5_000;

type Http = { url: string; close(): Promise<void> };

/** A stream read with fetch: its text so far, and `ended`, the time its server ended it. */
interface OpenedStream {
  status: 200;
  text(): string;
  ended: Promise<number>;
  close(): Promise<void>;
}
type Refused = { status: number; error: string; headers: Headers };

async function openStream(http: Http, query: string, headers: Record<string, string> = {}): Promise<OpenedStream | Refused> {
  const response = await fetch(`${http.url}/api/v1/events/stream${query}`, { headers });
  if (response.status !== 200) return { status: response.status, error: ((await response.json()) as { error: string }).error, headers: response.headers };
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let cancelled = false;
  const ended = (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return Date.now();
      text += decoder.decode(value, { stream: true });
    }
  })();
  // Live once the first bytes (`retry:` and `: connected`) arrived.
  await eventually(async () => text, (t) => expect(t).toContain(': connected'), 10_000);
  return {
    status: 200,
    text: () => text,
    ended,
    async close() {
      if (cancelled) return;
      cancelled = true;
      await reader.cancel().catch(() => undefined);
    },
  };
}

function opened(result: OpenedStream | Refused): OpenedStream {
  if (result.status !== 200) throw new Error(`stream refused: ${result.status} ${(result as Refused).error}`);
  return result as OpenedStream;
}

/** Resolves with the value, or fails with `what` after `ms` (so a stream that never ends fails the test rather than hanging it). */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms))),
  ]);
}

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

let sequence = 0;
function statusChange(deviceId: number): NewEvent {
  return { type: 'vehicle.status.changed', occurredAt: new Date(), deviceId, data: { from: 'Stopped', to: 'Moving' }, dedupeKey: `limits-${process.pid}-${++sequence}` };
}

describe('open streams per credential, revocation and stream tokens', () => {
  const LIMIT = 3;
  let t: TestApp;
  let http: Http;
  let userId: number;
  let adminKey: string;
  const streams: OpenedStream[] = [];
  const track = (result: OpenedStream | Refused) => {
    if (result.status === 200) streams.push(result as OpenedStream);
    return result;
  };

  beforeAll(async () => {
    t = await startTestApp({ eventStream: { maxPerCredential: LIMIT, heartbeatMs: 500 } });
    http = await serveOverHttp(t.app);
    const { user } = await t.fixtures.tenant();
    userId = user.id;
    adminKey = (await t.fixtures.key(userId, { permissions: ['*', 'keys:write'] })).key;
  });
  afterAll(async () => {
    for (const s of streams) await s.close();
    await http?.close();
    await t?.close();
  });

  const streamToken = async (key: string): Promise<string> => {
    const { status, body } = await t.json('/api/v1/events/stream-tokens', { key, method: 'POST' });
    expect(status).toBe(201);
    return body.data.token as string;
  };

  it(`answers 429 past the limit of open streams of one API key, counting those its stream tokens opened, and frees a slot when a stream closes`, async () => {
    const key = (await t.fixtures.key(userId)).key;
    const first = opened(track(await openStream(http, '', bearer(key))));
    opened(track(await openStream(http, '', bearer(key))));
    opened(track(await openStream(http, `?token=${await streamToken(key)}`)));

    const refused = track(await openStream(http, '', bearer(key))) as Refused;
    expect(refused.status).toBe(429);
    expect(refused.error).toBe(`This API key already has ${LIMIT} event streams open, the most it may; close one before opening another`);
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0);
    // A stream token of the same key counts against the key.
    expect((track(await openStream(http, `?token=${await streamToken(key)}`)) as Refused).status).toBe(429);
    // Another key of the same user has slots of its own.
    const other = (await t.fixtures.key(userId)).key;
    opened(track(await openStream(http, '', bearer(other))));

    // A client that goes away frees its slot.
    await first.close();
    await eventually(() => openStream(http, '', bearer(key)).then(track), (r) => expect(r.status).toBe(200));
  });

  it('counts an OAuth access token\'s streams against that token', async () => {
    const access = await accessToken(['events:read']);
    for (let i = 0; i < LIMIT; i++) opened(track(await openStream(http, '', bearer(access.token))));
    const refused = track(await openStream(http, '', bearer(access.token))) as Refused;
    expect([refused.status, refused.error]).toEqual([429, `This access token already has ${LIMIT} event streams open, the most it may; close one before opening another`]);
    // A new token of the same client is another credential.
    const second = await tokenOf(access.client);
    opened(track(await openStream(http, '', bearer(second))));
  });

  /** An OAuth client made through the API, and a token it got from POST /oauth/token. */
  async function accessToken(scopes: string[]) {
    const res = await fetch(`${http.url}/api/v1/oauth-clients`, {
      method: 'POST', headers: { ...bearer(adminKey), 'Content-Type': 'application/json' }, body: JSON.stringify({ scopes }),
    });
    const body = (await res.json()) as any;
    expect(res.status).toBe(201);
    const client = { id: body.data.id as number, clientId: body.data.clientId as string, secret: body.data.clientSecret as string };
    return { client, token: await tokenOf(client) };
  }

  async function tokenOf(client: { clientId: string; secret: string }): Promise<string> {
    const res = await fetch(`${http.url}/oauth/token`, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from(`${client.clientId}:${client.secret}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  /** Opens a stream, revokes (or lets expire) its credential, and checks the server ends it within the bound. */
  async function endsWithin(stream: OpenedStream, revoke: () => Promise<void>): Promise<void> {
    await revoke();
    const from = Date.now();
    const at = await within(stream.ended, REVOCATION_BOUND_MS + 10_000, 'the stream of a revoked credential ended');
    expect(at - from).toBeLessThan(REVOCATION_BOUND_MS);
  }

  describe('a stream whose credential is revoked or expires is closed within 5 s', () => {
    it('API key revoked through DELETE /api-keys/{id}', async () => {
      const victim = await t.fixtures.key(userId);
      const stream = opened(track(await openStream(http, '', bearer(victim.key))));
      await endsWithin(stream, async () => {
        const res = await fetch(`${http.url}/api/v1/api-keys/${victim.id}`, { method: 'DELETE', headers: bearer(adminKey) });
        expect(res.status).toBe(200);
      });
      expect((await openStream(http, '', bearer(victim.key))).status).toBe(401);
    });

    it('API key revoked as `fleet key revoke` does it (in the database, from another process), the stream opened with its stream token', async () => {
      const victim = await t.fixtures.key(userId);
      const stream = opened(track(await openStream(http, `?token=${await streamToken(victim.key)}`)));
      await endsWithin(stream, async () => {
        await revokeApiKey(t.database.db, String(victim.id));
      });
    });

    it('API key reaching its expiry', async () => {
      const expiresAt = new Date(Date.now() + 4_000);
      const victim = await t.fixtures.key(userId, { expiresAt });
      const stream = opened(track(await openStream(http, '', bearer(victim.key))));
      await endsWithin(stream, () => new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now()))));
    });

    it('OAuth access token revoked (POST /oauth/revoke)', async () => {
      const { client, token } = await accessToken(['events:read']);
      const stream = opened(track(await openStream(http, '', bearer(token))));
      await endsWithin(stream, async () => {
        const res = await fetch(`${http.url}/oauth/revoke`, {
          method: 'POST',
          headers: { Authorization: `Basic ${Buffer.from(`${client.clientId}:${client.secret}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
          body: `token=${encodeURIComponent(token)}`,
        });
        expect(res.status).toBe(200);
      });
    });

    it('OAuth client revoked (DELETE /oauth-clients/{id}), the stream opened with a stream token of its access token', async () => {
      const { client, token } = await accessToken(['events:read']);
      const stream = opened(track(await openStream(http, `?token=${await streamToken(token)}`)));
      await endsWithin(stream, async () => {
        const res = await fetch(`${http.url}/api/v1/oauth-clients/${client.id}`, { method: 'DELETE', headers: bearer(adminKey) });
        expect(res.status).toBe(200);
      });
    });
  });

  describe('stream tokens open one stream each', () => {
    it('refuses a token used a second time', async () => {
      const key = (await t.fixtures.key(userId)).key;
      const token = await streamToken(key);
      const first = opened(track(await openStream(http, `?token=${token}`)));
      await first.close();
      const again = await openStream(http, `?token=${token}`);
      track(again);
      expect(again.status).toBe(401);
      expect((again as Refused).error).toMatch(/used/);
    });

    it('lets exactly one of two concurrent uses of a token open a stream', async () => {
      const key = (await t.fixtures.key(userId)).key;
      for (let round = 0; round < 5; round++) {
        const token = await streamToken(key);
        const results = await Promise.all([openStream(http, `?token=${token}`), openStream(http, `?token=${token}`)]);
        results.forEach(track);
        expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
        for (const r of results) if (r.status === 200) await (r as OpenedStream).close();
      }
    });
  });
});

describe('maximum life', () => {
  const MAX_LIFE_MS = 1_500;
  let t: TestApp;
  let http: Http;
  let userId: number;
  let deviceId: number;

  beforeAll(async () => {
    // One stream per key: a stream the server closed must free its slot, or the client's reconnect is refused.
    t = await startTestApp({ eventStream: { maxLifeMs: MAX_LIFE_MS, maxPerCredential: 1, maxQueued: 5, heartbeatMs: 500 } });
    http = await serveOverHttp(t.app);
    const tenant = await t.fixtures.tenant();
    userId = tenant.user.id;
    deviceId = (await t.fixtures.device(tenant.account.id, { userIds: [tenant.user.id] })).id;
  });
  afterAll(async () => {
    await http?.close();
    await t?.close();
  });

  const append = (n: number) => t.database.db.transaction().execute((trx) => appendEvents(trx, Array.from({ length: n }, () => statusChange(deviceId))));

  // Each test with a key of its own: a slot freed at the end of one is freed a moment later.
  it('ends a stream at its maximum life, saying why, and frees its slot', async () => {
    const { key } = await t.fixtures.key(userId);
    const stream = opened(await openStream(http, '', bearer(key)));
    const openedAt = Date.now();
    const endedAt = await within(stream.ended, MAX_LIFE_MS + 15_000, 'the stream ended at its maximum life');
    expect(endedAt - openedAt).toBeLessThan(MAX_LIFE_MS + 10_000);
    expect(stream.text()).toMatch(/: closed: the stream reached its maximum life of 1\.5 s; reconnect with Last-Event-ID\n\n$/);
    const next = opened(await openStream(http, '', bearer(key)));
    await next.close();
  });

  it('lets an EventSource resume across each close from the last id it got, with no event lost or repeated', async () => {
    const { key } = await t.fixtures.key(userId);
    const received: string[] = [];
    let opens = 0;
    const source = new EventSource(`${http.url}/api/v1/events/stream`, {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...bearer(key) } }),
    });
    source.addEventListener('open', () => opens++);
    source.addEventListener('vehicle.status.changed', (e) => received.push((e as MessageEvent).lastEventId));
    try {
      await eventually(async () => opens, (n) => expect(n).toBe(1), 10_000);
      const appended: string[] = [];
      // Events keep coming over several lives of the stream and the reconnects between them.
      const until = Date.now() + 3 * MAX_LIFE_MS + 4_000;
      while (Date.now() < until) {
        appended.push(...(await append(1 + (appended.length % 3))));
        await new Promise((r) => setTimeout(r, 100));
      }
      await eventually(async () => received.length, (n) => expect(n).toBeGreaterThanOrEqual(appended.length), 20_000);
      expect(received).toEqual(appended);
      expect(opens).toBeGreaterThanOrEqual(2);
    } finally {
      source.close();
    }
  });

  it('ends the stream of a client that stopped reading and frees its slot, without that client reading on', async () => {
    const { key } = await t.fixtures.key(userId);
    // A backlog far larger than the sockets' buffers hold (16 MiB of events), so the server's writes
    // wait on the client; at its maximum life the stream is told to close, and its writes never end.
    const [before] = await append(1);
    const blob = 'x'.repeat(32 * 1024);
    for (let i = 0; i < 8; i++) {
      await t.database.db.transaction().execute((trx) =>
        appendEvents(trx, Array.from({ length: 64 }, () => ({ ...statusChange(deviceId), data: { from: 'Stopped', to: 'Moving', note: blob } }))),
      );
    }
    const response = await fetch(`${http.url}/api/v1/events/stream`, { headers: { ...bearer(key), 'Last-Event-ID': before! } });
    expect(response.status).toBe(200);
    const next = await eventually(() => openStream(http, '', bearer(key)), (r) => expect(r.status).toBe(200), 20_000);
    await (next as OpenedStream).close();
    // The server dropped the connection: reading on ends (with what the buffers held) instead of going on.
    const reader = response.body!.getReader();
    let bytes = 0;
    await within((async () => {
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (done) return;
        bytes += value!.length;
      }
    })(), 20_000, 'the dropped stream ended');
    expect(bytes).toBeLessThan(16 * 1024 * 1024);
  });
});

describe.runIf(process.env.REDIS_URL)('across API processes sharing Redis', () => {
  const prefix = `fleetcore-test-${process.pid}-${Date.now()}:event-streams:`;
  let t: TestApp;
  const https: Http[] = [];
  const feeds: EventFeed[] = [];
  const leases: RedisStreamLeases[] = [];
  const redises: Redis[] = [];
  const streams: OpenedStream[] = [];
  let key: string;
  let keyId: number;

  const connect = () => {
    const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    redises.push(redis);
    return redis;
  };

  /** Another API process on the same database and Redis. */
  async function apiProcess(limit: number): Promise<Http> {
    const eventFeed = await EventFeed.open(t.database.db, silentLogger, t.database.pool, { pollMs: 250 });
    feeds.push(eventFeed);
    const streamLeases = new RedisStreamLeases(connect(), silentLogger, { prefix });
    leases.push(streamLeases);
    const app = createApp({
      db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), eventFeed, streamLeases,
      config: { ...TEST_CONFIG, eventStream: { maxPerCredential: limit } },
    });
    const http = await serveOverHttp(app);
    https.push(http);
    return http;
  }

  beforeAll(async () => {
    t = await startTestApp();
    const { user } = await t.fixtures.tenant();
    const made = await t.fixtures.key(user.id);
    key = made.key;
    keyId = made.id;
  });
  afterAll(async () => {
    for (const s of streams) await s.close();
    for (const h of https) await h.close();
    for (const l of leases) await l.close();
    for (const f of feeds) await f.close();
    for (const r of redises) r.disconnect();
    await t?.close();
    await deleteRedisKeys(prefix.slice(0, -':event-streams:'.length));
  });

  it('holds the limit over every process, and frees a slot when a stream on either closes', async () => {
    const [a, b] = [await apiProcess(2), await apiProcess(2)];
    const onA = opened(await openStream(a, '', bearer(key)));
    streams.push(onA);
    streams.push(opened(await openStream(b, '', bearer(key))));
    expect((await openStream(a, '', bearer(key))).status).toBe(429);
    expect((await openStream(b, '', bearer(key))).status).toBe(429);
    await onA.close();
    const reopened = await eventually(() => openStream(b, '', bearer(key)), (r) => expect(r.status).toBe(200));
    streams.push(reopened as OpenedStream);
  });

  it('frees the slots of a process that died once their leases run out', async () => {
    const credential = `key:${keyId}-dead`;
    const dyingRedis = connect();
    const dying = new RedisStreamLeases(dyingRedis, silentLogger, { prefix, leaseMs: 1_000 });
    leases.push(dying);
    const survivor = new RedisStreamLeases(connect(), silentLogger, { prefix, leaseMs: 1_000 });
    leases.push(survivor);
    expect(await dying.take(credential, 'dead-1', 1)).toBe(true);
    expect(await survivor.take(credential, 'alive-1', 1)).toBe(false);
    // Renewed while the process lives: still held after several lease periods.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await survivor.take(credential, 'alive-1', 1)).toBe(false);
    // The process loses Redis as if it died: nothing released, no more renewals.
    dyingRedis.disconnect();
    await eventually(() => survivor.take(credential, 'alive-1', 1), (taken) => expect(taken).toBe(true), 10_000);
    await survivor.release(credential, 'alive-1');
  });
});
