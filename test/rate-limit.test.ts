import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/test-app.ts';

const LIMIT = 50;
const OVERVIEW_LIMIT = 600;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ rateLimitMax: LIMIT, overviewRateLimitMax: OVERVIEW_LIMIT });
});
afterAll(async () => {
  await t?.close();
});

const STATUS = '/api/v1/devices/status';

function rateHeaders(headers: Headers) {
  return {
    limit: headers.get('RateLimit-Limit'),
    remaining: headers.get('RateLimit-Remaining'),
    reset: headers.get('RateLimit-Reset'),
  };
}

/**
 * Sends `n` requests of `key` at once and returns them ordered by RateLimit-Remaining, highest first.
 * Concurrent, so the whole burst lands well inside one 10 s window even on a loaded machine.
 */
async function burst(key: string, n: number, path = STATUS): Promise<Array<{ status: number; headers: Headers; body: any }>> {
  const started = Date.now();
  const responses = await Promise.all(
    Array.from({ length: n }, async () => {
      const res = await t.call(path, { key });
      return { status: res.status, headers: res.headers, body: await res.json() };
    }),
  );
  // The burst must fit in one window, or the counts checked after it prove nothing.
  expect(Date.now() - started, 'burst duration (ms)').toBeLessThan(10_000);
  return responses.sort((a, b) => Number(b.headers.get('RateLimit-Remaining')) - Number(a.headers.get('RateLimit-Remaining')));
}

describe('rate limit: 50 requests per 10 s per key', () => {
  it('lets 50 requests through, each one taking a slot, and refuses the 51st with 429', async () => {
    const { key } = await t.fixtures.tenant();
    const responses = await burst(key, LIMIT);
    expect(responses.map((r) => r.status)).toEqual(Array(LIMIT).fill(200));
    expect(responses.every((r) => r.body.success === true)).toBe(true);
    // Remaining counts down 49 … 0: each request took exactly one slot.
    expect(responses.map((r) => r.headers.get('RateLimit-Remaining'))).toEqual(Array.from({ length: LIMIT }, (_, i) => String(LIMIT - 1 - i)));
    for (const { headers } of responses) {
      const h = rateHeaders(headers);
      expect(h.limit).toBe(String(LIMIT));
      expect(h.reset).toMatch(/^\d+$/);
      expect(Number(h.reset)).toBeGreaterThanOrEqual(1);
      expect(Number(h.reset)).toBeLessThanOrEqual(10);
    }

    const { status, body, headers } = await t.json(STATUS, { key });
    expect(status).toBe(429);
    expect(Object.keys(body).sort()).toEqual(['data', 'error', 'success', 'timestamp']);
    expect(body).toMatchObject({ success: false, data: null });
    expect(body.error).toMatch(/rate limit/i);
    expect(body.error).toContain(String(LIMIT));
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
    const retryAfter = headers.get('Retry-After');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(10);
    expect(rateHeaders(headers)).toEqual({ limit: String(LIMIT), remaining: '0', reset: retryAfter });

    // Still refused on the next tries, on every endpoint, for the same key.
    for (const path of [STATUS, '/api/v1/geofences', '/api/v1/travels']) {
      expect((await t.call(path, { key })).status, path).toBe(429);
    }
  });

  it('counts down RateLimit-Remaining one request after another', async () => {
    const { key } = await t.fixtures.tenant();
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.call(STATUS, { key });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      remaining.push(res.headers.get('RateLimit-Remaining')!);
    }
    expect(remaining).toEqual(['49', '48', '47', '46', '45']);
  });

  it('keeps the count per key: another key of the same user is unaffected', async () => {
    const { user, key: first } = await t.fixtures.tenant();
    const second = (await t.fixtures.key(user.id)).key;
    expect((await burst(first, LIMIT)).map((r) => r.status)).toEqual(Array(LIMIT).fill(200));
    expect((await t.call(STATUS, { key: first })).status).toBe(429);

    const res = await t.call(STATUS, { key: second });
    expect(res.status).toBe(200);
    expect(res.headers.get('RateLimit-Remaining')).toBe(String(LIMIT - 1));
    // The same key through X-Api-Key is the same key: still limited.
    expect((await t.call(STATUS, { headers: { 'X-Api-Key': first } })).status).toBe(429);
  });

  it('counts a key the same through Authorization and X-Api-Key', async () => {
    const { key } = await t.fixtures.tenant();
    const a = await t.call(STATUS, { key });
    const b = await t.call(STATUS, { headers: { 'X-Api-Key': key } });
    expect([a.headers.get('RateLimit-Remaining'), b.headers.get('RateLimit-Remaining')]).toEqual([String(LIMIT - 1), String(LIMIT - 2)]);
  });

  it('sets the RateLimit headers on every authenticated response, 404 and 403 included', async () => {
    const { user, key } = await t.fixtures.tenant();
    const readOnly = (await t.fixtures.key(user.id, { permissions: ['devices:read'] })).key;
    // Each with the limit of its class: the detailed endpoints', or the overview one (60 s window) for the rest.
    const cases: Array<[string, string, number, number]> = [
      [key, STATUS, 200, LIMIT],
      [key, '/api/v1/devices/999999999999999/status', 404, LIMIT],
      [key, '/api/v1/travels/999999', 404, LIMIT],
      [key, '/api/v1/no-such-route', 404, OVERVIEW_LIMIT],
      [key, '/api/v1/reports/geofences', 400, LIMIT],
      [readOnly, '/api/v1/travels', 403, LIMIT],
      [readOnly, '/api/v1/events', 403, OVERVIEW_LIMIT],
    ];
    for (const [k, path, expected, limit] of cases) {
      const res = await t.call(path, { key: k });
      expect(res.status, path).toBe(expected);
      const h = rateHeaders(res.headers);
      expect(h.limit, path).toBe(String(limit));
      expect(h.remaining, path).toMatch(/^\d+$/);
      expect(h.reset, path).toMatch(/^\d+$/);
      expect(Number(h.reset)).toBeGreaterThanOrEqual(1);
      expect(Number(h.reset)).toBeLessThanOrEqual(limit === LIMIT ? 10 : 60);
    }
  });

  it('does not count 401 responses against anyone', async () => {
    const { user, key } = await t.fixtures.tenant();
    const expired = await t.fixtures.key(user.id, { expiresAt: new Date(Date.now() - 1000) });
    const refused: Array<Record<string, string>> = [
      {},
      { Authorization: 'Bearer fc_live_unknown' },
      { Authorization: `Basic ${key}` },
      { Authorization: `Bearer ${expired.key}` },
    ];
    const started = Date.now();
    const responses = await Promise.all(
      Array.from({ length: LIMIT + 5 }, async (_, i) => {
        const res = await t.call(STATUS, { headers: refused[i % refused.length]! });
        await res.arrayBuffer();
        return res;
      }),
    );
    for (const res of responses) {
      expect(res.status).toBe(401);
      expect(res.headers.get('RateLimit-Remaining')).toBeNull();
    }
    const res = await t.call(STATUS, { key });
    // Still inside the window of the refused requests, so any slot they had taken would show here.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(res.status).toBe(200);
    expect(res.headers.get('RateLimit-Remaining')).toBe(String(LIMIT - 1));
  });

  it('also limits requests that fail validation or permission, since they were authenticated', async () => {
    const { user } = await t.fixtures.tenant();
    const readOnly = (await t.fixtures.key(user.id, { permissions: ['devices:read'] })).key;
    expect((await burst(readOnly, LIMIT, '/api/v1/travels')).map((r) => r.status)).toEqual(Array(LIMIT).fill(403));
    expect((await t.call(STATUS, { key: readOnly })).status).toBe(429);
  });
});
