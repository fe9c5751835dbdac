import { eventually } from './support/eventually.ts';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../api/app.ts';
import { hashApiKey, issueApiKey } from '../api/auth/api-key-token.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { insertApiKey } from '../db/api-keys.ts';
import { silentLogger } from '../runtime/logger.ts';
import { serveOverHttp } from './support/http-server.ts';
import { startTestApp, TEST_CONFIG, type TestApp } from './support/test-app.ts';

// Keys over the API: listing without secrets, minting no more than the caller holds for no longer
// than it lives, revocation that takes hold at once on another API process, constant-time lookup
// among keys sharing a prefix, and the audit log of it all, with the address each change came from.

let t: TestApp;
let userId: number;
let admin: string;

const call = (key: string, path: string, method = 'GET', body?: unknown) => t.json(`/api/v1${path}`, { key, method, body });

beforeAll(async () => {
  t = await startTestApp();
  const { user } = await t.fixtures.tenant();
  userId = user.id;
  admin = (await t.fixtures.key(user.id, { permissions: ['*', 'keys:write', 'audit:read'] })).key;
});
afterAll(async () => {
  await t?.close();
});

describe('GET /api-keys', () => {
  it('lists the user\'s keys of the caller\'s mode, oldest first, without a secret or a hash', async () => {
    const testKey = (await t.fixtures.key(userId, { mode: 'test', permissions: ['keys:read'] })).key;
    const other = await t.fixtures.tenant();
    const { status, body } = await call(admin, '/api-keys?limit=100');
    expect(status).toBe(200);
    const text = JSON.stringify(body);
    expect(text).not.toMatch(/key_hash|fc_live_[0-9A-Za-z]{32}/);
    expect(body.data.every((k: any) => k.mode === 'live')).toBe(true);
    expect(body.data.map((k: any) => k.id)).toEqual([...body.data.map((k: any) => k.id)].sort((a: number, b: number) => a - b));
    const tests = await call(testKey, '/api-keys');
    expect(tests.body.data.map((k: any) => k.mode)).toEqual(['test']);
    expect(text).not.toContain(other.key.slice(0, 14));
  });
});

describe('POST /api-keys', () => {
  it('mints a key whose secret works once shown, with the permissions asked for', async () => {
    const { status, body } = await call(admin, '/api-keys', 'POST', { name: 'reporting', permissions: ['reports:read', 'devices:read'] });
    expect(status).toBe(201);
    expect(body.data).toMatchObject({ name: 'reporting', mode: 'live', permissions: ['reports:read', 'devices:read'], expiresAt: null, revokedAt: null });
    expect((await call(body.data.key, '/devices/status')).status).toBe(200);
    expect((await call(body.data.key, '/vehicles')).status).toBe(403);
    const listed = await call(admin, '/api-keys?limit=100');
    expect(listed.body.data.find((k: any) => k.id === body.data.id)).not.toHaveProperty('key');
  });

  it('never grants more than the caller holds, nor lives longer, nor changes mode', async () => {
    const limited = (await t.fixtures.key(userId, { permissions: ['keys:write', 'devices:read'], expiresAt: new Date(Date.now() + 3_600_000) })).key;
    expect(await call(limited, '/api-keys', 'POST', { permissions: ['devices:read', 'vehicles:read'] })).toMatchObject({
      status: 403, body: { error: expect.stringMatching(/lacks vehicles:read/) },
    });
    expect((await call(limited, '/api-keys', 'POST', { permissions: ['*'] })).status).toBe(403);
    const tooLong = await call(limited, '/api-keys', 'POST', { expiresAt: new Date(Date.now() + 7_200_000).toISOString() });
    expect(tooLong).toMatchObject({ status: 403, body: { error: expect.stringMatching(/cannot outlive/) } });
    // By default the new key inherits the caller's permissions and expiry.
    const inherited = await call(limited, '/api-keys', 'POST', {});
    expect(inherited.status).toBe(201);
    expect(inherited.body.data.permissions).toEqual(['keys:write', 'devices:read']);
    expect(Date.parse(inherited.body.data.expiresAt)).toBeLessThanOrEqual(Date.now() + 3_600_000);
    expect((await call(limited, '/api-keys', 'POST', { mode: 'test' })).status).toBe(400);
    expect((await call(limited, '/api-keys', 'POST', { expiresAt: 'tomorrow' })).status).toBe(400);
    expect((await call(limited, '/api-keys', 'POST', { expiresAt: new Date(Date.now() - 1000).toISOString() })).status).toBe(400);
    // * does not carry the named-only permissions: a * key without keys:write cannot mint at all.
    const star = (await t.fixtures.key(userId, { permissions: ['*'] })).key;
    expect((await call(star, '/api-keys', 'POST', {})).status).toBe(403);
    // A * key holding keys:write by name may pass on * and keys:write, but not commands:write.
    expect((await call(admin, '/api-keys', 'POST', { permissions: ['*', 'keys:write'] })).status).toBe(201);
    expect((await call(admin, '/api-keys', 'POST', { permissions: ['commands:write'] })).status).toBe(403);
  });
});

describe('what a credential minted', () => {
  it('names its parent, and is revoked with it, down the whole tree: keys, OAuth clients and their tokens', async () => {
    const parent = (await call(admin, '/api-keys', 'POST', { name: 'parent', permissions: ['*', 'keys:write'] })).body.data;
    expect(parent.mintedBy).toEqual({ kind: 'api_key', id: expect.any(Number) });
    const child = (await call(parent.key, '/api-keys', 'POST', { name: 'child', permissions: ['devices:read'] })).body.data;
    expect(child.mintedBy).toEqual({ kind: 'api_key', id: parent.id });
    const client = (await call(parent.key, '/oauth-clients', 'POST', { scopes: ['devices:read', 'keys:write'] })).body.data;
    expect(client.mintedBy).toEqual({ kind: 'api_key', id: parent.id });
    // A token of the client mints a key of its own: its parent is the client.
    const http = await serveOverHttp(t.app);
    let token: string;
    try {
      const res = await fetch(`${http.url}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` },
        body: 'grant_type=client_credentials',
      });
      token = ((await res.json()) as any).access_token;
    } finally {
      await http.close();
    }
    const grandchild = (await call(token, '/api-keys', 'POST', { permissions: ['devices:read'] })).body.data;
    expect(grandchild.mintedBy).toEqual({ kind: 'oauth_client', id: client.id });
    // An unrelated key of the same user is not touched.
    const sibling = (await call(admin, '/api-keys', 'POST', { permissions: ['devices:read'] })).body.data;
    for (const key of [parent.key, child.key, token, grandchild.key, sibling.key]) expect((await call(key, '/devices/status')).status).toBe(200);

    expect((await call(admin, `/api-keys/${parent.id}`, 'DELETE')).status).toBe(200);
    for (const key of [parent.key, child.key, token, grandchild.key]) {
      expect(await call(key, '/devices/status')).toMatchObject({ status: 401, body: { error: expect.stringMatching(/revoked/) } });
    }
    expect((await call(sibling.key, '/devices/status')).status).toBe(200);
    const clients = (await call(admin, '/oauth-clients?limit=100')).body.data;
    expect(clients.find((c: any) => c.id === client.id).revokedAt).toEqual(expect.any(String));
    // Each revocation is in the audit log, the cascaded ones with the credential they went with.
    const audit = (await call(admin, '/audit?action=api_key.revoked,oauth_client.revoked&limit=10')).body.data;
    const revoked = audit.map((e: any) => [e.target.type, e.target.id, e.details.revokedWith ?? null]);
    expect(revoked).toEqual(expect.arrayContaining([
      ['api_key', String(parent.id), null],
      ['api_key', String(child.id), { apiKeyId: parent.id }],
      ['oauth_client', String(client.id), { apiKeyId: parent.id }],
      ['api_key', String(grandchild.id), { oauthClientId: client.id }],
    ]));
    expect(revoked).toHaveLength(4);
  });
});

describe('DELETE /api-keys/{id}', () => {
  it('revokes a key so that its next request fails on another API process; a repeat answers the same', async () => {
    const minted = (await call(admin, '/api-keys', 'POST', { permissions: ['devices:read'] })).body.data;
    // A second app on the same database: another API process.
    const other = createApp({ db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), config: TEST_CONFIG });
    const onOther = () => other.request('/api/v1/devices/status', { headers: { Authorization: `Bearer ${minted.key}` } });
    expect((await onOther()).status).toBe(200);
    const revoked = await call(admin, `/api-keys/${minted.id}`, 'DELETE');
    expect(revoked).toMatchObject({ status: 200, body: { data: { id: minted.id, revokedAt: expect.any(String) } } });
    // The other process re-reads credentials at least once a second.
    const refused = await eventually(async () => onOther(), (r) => expect(r.status).toBe(401), 2_000);
    expect(((await refused.json()) as any).error).toBe('API key has been revoked');
    expect((await call(admin, `/api-keys/${minted.id}`, 'DELETE')).body.data.revokedAt).toBe(revoked.body.data.revokedAt);
  });

  it('answers 404 for a key of another user or of the other mode', async () => {
    const colleague = await t.fixtures.user((await t.database.db.selectFrom('users').select('account_id').where('id', '=', userId).executeTakeFirstOrThrow()).account_id);
    const theirs = await t.fixtures.key(colleague.id);
    const testOne = await t.fixtures.key(userId, { mode: 'test' });
    for (const id of [theirs.id, testOne.id]) expect((await call(admin, `/api-keys/${id}`, 'DELETE')).status).toBe(404);
    expect((await call(theirs.key, '/devices/status')).status).toBe(200);
  });
});

describe('key lookup', () => {
  it('tells apart keys that share a clear prefix, comparing their hashes in constant time', async () => {
    const issued = issueApiKey('live');
    // Another key stored under the same prefix (prefixes are six characters; they can repeat).
    const twin = `${issued.prefix}${'x'.repeat(26)}`;
    await insertApiKey(t.database.db, { userId, prefix: issued.prefix, keyHash: hashApiKey(twin), mode: 'live', permissions: ['devices:read'] });
    await insertApiKey(t.database.db, { userId, prefix: issued.prefix, keyHash: issued.hash, mode: 'live', permissions: ['vehicles:read'] });
    expect((await call(issued.key, '/vehicles')).status).toBe(200);
    expect((await call(issued.key, '/devices/status')).status).toBe(403);
    expect((await call(twin, '/devices/status')).status).toBe(200);
    expect((await call(`${issued.prefix}${'y'.repeat(26)}`, '/devices/status')).body.error).toBe('Invalid API key');
    const stored = await sql<{ n: number }>`SELECT count(*)::int AS n FROM api_keys WHERE key_hash = ${issued.key}`.execute(t.database.db);
    expect(stored.rows[0]!.n).toBe(0);
  });
});

describe('the audit log', () => {
  it('records key, client and webhook changes with who, what, when and from which address', async () => {
    const http = await serveOverHttp(t.app);
    try {
      const post = async (path: string, body: unknown, method = 'POST') => {
        const res = await fetch(`${http.url}/api/v1${path}`, { method, headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
        return (await res.json()) as any;
      };
      const key = (await post('/api-keys', { name: 'audited', permissions: ['devices:read'] })).data;
      await post(`/api-keys/${key.id}`, undefined, 'DELETE');
      const client = (await post('/oauth-clients', { scopes: ['devices:read'] })).data;
      await post(`/oauth-clients/${client.id}`, undefined, 'DELETE');
      const hook = (await post('/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] })).data;
      await post(`/webhooks/${hook.id}`, { description: 'changed' }, 'PATCH');
      await post(`/webhooks/${hook.id}/rotate-secret`, undefined);
      await post(`/webhooks/${hook.id}`, undefined, 'DELETE');
      const res = await fetch(`${http.url}/api/v1/audit?limit=20`, { headers: { Authorization: `Bearer ${admin}` } });
      const entries = ((await res.json()) as any).data.slice(0, 8).reverse();
      expect(entries.map((e: any) => [e.action, e.target.id])).toEqual([
        ['api_key.created', String(key.id)], ['api_key.revoked', String(key.id)],
        ['oauth_client.created', String(client.id)], ['oauth_client.revoked', String(client.id)],
        ['webhook.created', String(hook.id)], ['webhook.updated', String(hook.id)], ['webhook.secret_rotated', String(hook.id)], ['webhook.deleted', String(hook.id)],
      ]);
      const adminRow = await t.database.db.selectFrom('api_keys').select(['id', 'prefix']).where('key_hash', '=', hashApiKey(admin)).executeTakeFirstOrThrow();
      for (const e of entries) expect(e).toMatchObject({ actor: { kind: 'api_key', keyId: adminRow.id, keyPrefix: adminRow.prefix, userId }, address: '127.0.0.1' });
      expect(entries[0].details).toMatchObject({ name: 'audited', permissions: ['devices:read'] });
      // Filters, and the permission it needs.
      const families = await t.json('/api/v1/audit?action=webhook.*', { key: admin });
      expect(new Set(families.body.data.map((e: any) => e.action.split('.')[0]))).toEqual(new Set(['webhook']));
      const noAudit = (await t.fixtures.key(userId, { permissions: ['devices:read'] })).key;
      expect((await t.json('/api/v1/audit', { key: noAudit })).status).toBe(403);
      // Who did what from where is for those granted it by name: * does not carry it.
      const star = (await t.fixtures.key(userId, { permissions: ['*', 'keys:write'] })).key;
      expect(await t.json('/api/v1/audit', { key: star })).toMatchObject({ status: 403, body: { error: 'This API key lacks the audit:read permission' } });
    } finally {
      await http.close();
    }
  });
});
