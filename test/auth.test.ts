import { eventually } from './support/eventually.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../db/api-keys.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';
import { expectErrorEnvelope } from './support/envelope-assertions.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const CHALLENGE = /^Bearer realm="[^"]+"$/;

/** The eight detailed endpoints, each with the permission it needs and a request that succeeds for a key holding it. */
const ENDPOINTS = [
  { method: 'GET', path: '/api/v1/devices/status', permission: 'devices:read' },
  { method: 'GET', path: '/api/v1/devices/X/status', permission: 'devices:read' },
  { method: 'GET', path: '/api/v1/geofences', permission: 'geofences:read' },
  { method: 'GET', path: '/api/v1/reports/geofences?from=2024-01-01&to=2024-01-02', permission: 'reports:read' },
  { method: 'POST', path: '/api/v1/travels', permission: 'travels:write' },
  { method: 'GET', path: '/api/v1/travels/1', permission: 'travels:read' },
  { method: 'DELETE', path: '/api/v1/travels/1', permission: 'travels:write' },
  { method: 'GET', path: '/api/v1/travels', permission: 'travels:read' },
] as const;

const ALL = ['devices:read', 'geofences:read', 'reports:read', 'travels:read', 'travels:write'];

const travelBody = {
  vehicle: 'No Such Vehicle',
  startTime: '01/05/2030 08:00',
  waypoints: [{ geofence: 'No Such Geofence', expectedArrival: '01/05/2030 09:00' }],
};

const bodyFor = (method: string) => (method === 'POST' ? travelBody : undefined);

async function lastUsedAt(keyId: number): Promise<Date | null> {
  const row = await t.database.db.selectFrom('api_keys').select('last_used_at').where('id', '=', keyId).executeTakeFirstOrThrow();
  return row.last_used_at;
}

describe('missing, invalid, revoked and expired keys', () => {
  it('answers 401 with the error envelope and a Bearer challenge when no key is sent', async () => {
    const { status, body, headers } = await t.json('/api/v1/devices/status');
    expect(status).toBe(401);
    expectErrorEnvelope(body, /API key required/);
    expect(headers.get('WWW-Authenticate')).toMatch(CHALLENGE);
    expect(headers.get('Content-Type')).toMatch(/^application\/json/);
  });

  it('answers 401 without a key on every one of the eight endpoints', async () => {
    for (const e of ENDPOINTS) {
      const { status, body, headers } = await t.json(e.path, { method: e.method, body: bodyFor(e.method) });
      expect(status, `${e.method} ${e.path}`).toBe(401);
      expectErrorEnvelope(body);
      expect(headers.get('WWW-Authenticate'), `${e.method} ${e.path}`).toMatch(CHALLENGE);
    }
  });

  it('treats empty and blank key headers as no key', async () => {
    for (const headers of [{ Authorization: '' }, { 'X-Api-Key': '' }, { 'X-Api-Key': '   ' }] as Array<Record<string, string>>) {
      const { status, body } = await t.json('/api/v1/devices/status', { headers });
      expect(status, JSON.stringify(headers)).toBe(401);
      expectErrorEnvelope(body, /API key required/);
    }
  });

  it('answers 401 "Invalid API key" for an unknown key, in either header', async () => {
    const { key } = await t.fixtures.tenant();
    const wrong = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
    for (const headers of [{ Authorization: `Bearer ${wrong}` }, { 'X-Api-Key': wrong }, { 'X-Api-Key': 'fc_live_nothing' }] as Array<Record<string, string>>) {
      const { status, body, headers: h } = await t.json('/api/v1/devices/status', { headers });
      expect(status, JSON.stringify(headers)).toBe(401);
      expectErrorEnvelope(body, 'Invalid API key');
      expect(h.get('WWW-Authenticate')).toMatch(CHALLENGE);
    }
    expect((await t.json('/api/v1/devices/status', { key })).status).toBe(200);
  });

  it('answers 401 for an absurdly long key without looking it up', async () => {
    const { status, body } = await t.json('/api/v1/devices/status', { headers: { 'X-Api-Key': 'k'.repeat(10_000) } });
    expect(status).toBe(401);
    expectErrorEnvelope(body, 'Invalid API key');
  });

  it('answers 401 for a malformed Authorization header, even carrying a valid key', async () => {
    const { key } = await t.fixtures.tenant();
    for (const authorization of ['Basic xyz', `Basic ${key}`, 'Bearer', 'Bearer    ', `Token ${key}`, key, `Bearer ${key} extra`]) {
      const { status, body, headers } = await t.json('/api/v1/devices/status', { headers: { Authorization: authorization } });
      expect(status, authorization).toBe(401);
      expectErrorEnvelope(body);
      expect(headers.get('WWW-Authenticate')).toMatch(CHALLENGE);
    }
    const basic = await t.json('/api/v1/devices/status', { headers: { Authorization: 'Basic xyz' } });
    expect(basic.body.error).toMatch(/Bearer/);
  });

  it('refuses a revoked key with 401', async () => {
    const { user } = await t.fixtures.tenant();
    const row = await t.fixtures.key(user.id);
    expect((await t.json('/api/v1/devices/status', { key: row.key })).status).toBe(200);
    // Revoked elsewhere (the CLI, another process): credentials are re-read at least once a second.
    const revoked = await revokeApiKey(t.database.db, String(row.id));
    expect(revoked.key.id).toBe(row.id);
    const { status, body, headers } = await eventually(() => t.json('/api/v1/devices/status', { key: row.key }), (r) => expect(r.status).toBe(401), 2_000);
    expect(status).toBe(401);
    expectErrorEnvelope(body, /revoked/i);
    expect(headers.get('WWW-Authenticate')).toMatch(CHALLENGE);
    // Through X-Api-Key as well.
    expect((await t.json('/api/v1/devices/status', { headers: { 'X-Api-Key': row.key } })).status).toBe(401);
  });

  it('refuses an expired key with 401 and accepts one that expires later', async () => {
    const { user } = await t.fixtures.tenant();
    const expired = await t.fixtures.key(user.id, { expiresAt: new Date(Date.now() - 60_000) });
    const current = await t.fixtures.key(user.id, { expiresAt: new Date(Date.now() + 3_600_000) });
    const { status, body, headers } = await t.json('/api/v1/devices/status', { key: expired.key });
    expect(status).toBe(401);
    expectErrorEnvelope(body, /expired/i);
    expect(headers.get('WWW-Authenticate')).toMatch(CHALLENGE);
    expect((await t.json('/api/v1/devices/status', { key: current.key })).status).toBe(200);
  });
});

describe('presenting a valid key', () => {
  it('accepts the key in X-Api-Key', async () => {
    const { account, key } = await t.fixtures.tenant();
    await t.fixtures.device(account.id, { name: 'Via header' });
    const { status, body } = await t.json('/api/v1/devices/status', { headers: { 'X-Api-Key': key } });
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.data.map((d: { name: string }) => d.name)).toEqual(['Via header']);
  });

  it('accepts the key as Authorization: Bearer, with any case of the scheme', async () => {
    const { account, key } = await t.fixtures.tenant();
    await t.fixtures.device(account.id, { name: 'Via bearer' });
    for (const authorization of [`Bearer ${key}`, `bearer ${key}`, `BEARER  ${key}`]) {
      const res = await t.call('/api/v1/devices/status', { headers: { Authorization: authorization } });
      expect(res.status, authorization).toBe(200);
      expect(res.headers.get('WWW-Authenticate')).toBeNull();
      const body: any = await res.json();
      expect(body.data.map((d: { name: string }) => d.name)).toEqual(['Via bearer']);
    }
  });

  it('answers as the key\'s user: the key decides what is visible, not anything else in the request', async () => {
    const a = await t.fixtures.tenant();
    const b = await t.fixtures.tenant();
    await t.fixtures.device(a.account.id, { name: 'A only' });
    await t.fixtures.device(b.account.id, { name: 'B only' });
    const names = async (headers: Record<string, string>) =>
      (await t.json('/api/v1/devices/status', { headers })).body.data.map((d: { name: string }) => d.name);
    expect(await names({ 'X-Api-Key': a.key })).toEqual(['A only']);
    expect(await names({ Authorization: `Bearer ${b.key}` })).toEqual(['B only']);
  });

  it('records last_used_at after a request', async () => {
    const { user } = await t.fixtures.tenant();
    const row = await t.fixtures.key(user.id);
    expect(await lastUsedAt(row.id)).toBeNull();
    const before = Date.now();
    expect((await t.json('/api/v1/devices/status', { key: row.key })).status).toBe(200);
    let used: Date | null = null;
    for (let i = 0; i < 100 && !used; i++) {
      used = await lastUsedAt(row.id);
      if (!used) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(used).toBeInstanceOf(Date);
    // Database clock vs test clock: allow a little skew.
    expect(Math.abs(used!.getTime() - before)).toBeLessThan(60_000);
  });

  it('does not record use for a request refused as revoked', async () => {
    const { user } = await t.fixtures.tenant();
    const row = await t.fixtures.key(user.id);
    await revokeApiKey(t.database.db, String(row.id));
    expect((await t.json('/api/v1/devices/status', { key: row.key })).status).toBe(401);
    // Give a fire-and-forget write time to land if there (wrongly) were one; then a live key's touch as a marker.
    const marker = await t.fixtures.key(user.id);
    await t.json('/api/v1/devices/status', { key: marker.key });
    for (let i = 0; i < 100 && !(await lastUsedAt(marker.id)); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await lastUsedAt(marker.id)).not.toBeNull();
    expect(await lastUsedAt(row.id)).toBeNull();
  });
});

describe('permissions', () => {
  it('a devices:read key reads device status but gets 403 on travels', async () => {
    const { account, user } = await t.fixtures.tenant();
    await t.fixtures.device(account.id, { name: 'Readable' });
    const { key } = await t.fixtures.key(user.id, { permissions: ['devices:read'] });

    const ok = await t.json('/api/v1/devices/status', { key });
    expect(ok.status).toBe(200);
    expect(ok.body.data.map((d: { name: string }) => d.name)).toEqual(['Readable']);

    const list = await t.json('/api/v1/travels', { key });
    expect(list.status).toBe(403);
    expectErrorEnvelope(list.body, /travels:read/);

    const create = await t.json('/api/v1/travels', { key, method: 'POST', body: travelBody });
    expect(create.status).toBe(403);
    expectErrorEnvelope(create.body, /travels:write/);
  });

  it('checks the permission before validating the body', async () => {
    const { user } = await t.fixtures.tenant();
    const { key } = await t.fixtures.key(user.id, { permissions: ['travels:read'] });
    const { status, body } = await t.json('/api/v1/travels', { key, method: 'POST', body: { vehicle: 5 } });
    expect(status).toBe(403);
    expectErrorEnvelope(body, /travels:write/);
  });

  it('each endpoint needs exactly its own permission', async () => {
    const { user } = await t.fixtures.tenant();
    for (const e of ENDPOINTS) {
      const label = `${e.method} ${e.path}`;
      const without = await t.fixtures.key(user.id, { permissions: ALL.filter((p) => p !== e.permission) });
      const denied = await t.json(e.path, { key: without.key, method: e.method, body: bodyFor(e.method) });
      expect(denied.status, label).toBe(403);
      expectErrorEnvelope(denied.body, new RegExp(e.permission));

      const only = await t.fixtures.key(user.id, { permissions: [e.permission] });
      const allowed = await t.json(e.path, { key: only.key, method: e.method, body: bodyFor(e.method) });
      // Past authorization the request meets the data: unknown device, vehicle or travel answer 4xx, never 401/403/5xx.
      expect([401, 403], label).not.toContain(allowed.status);
      expect(allowed.status, label).toBeLessThan(500);

      const star = await t.fixtures.key(user.id, { permissions: ['*'] });
      expect((await t.json(e.path, { key: star.key, method: e.method, body: bodyFor(e.method) })).status, label).toBe(allowed.status);
    }
  });

  it('a key with no permissions at all is refused everywhere with 403', async () => {
    const { user } = await t.fixtures.tenant();
    const { key } = await t.fixtures.key(user.id, { permissions: [] });
    for (const e of ENDPOINTS) {
      const { status, body } = await t.json(e.path, { key, method: e.method, body: bodyFor(e.method) });
      expect(status, `${e.method} ${e.path}`).toBe(403);
      expectErrorEnvelope(body);
    }
  });
});
