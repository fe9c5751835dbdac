import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../domain/access/roles.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

// POST /users/{id}/sign-in-link through the real app: the one-time link works once, sets the password
// and ends the user's sessions; who may issue one for whom; the audit entry.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const MANAGER = ['*', 'users:read', 'users:write', 'audit:read'];

async function member(accountId: number, role: Role, options: { permissions?: string[]; mode?: 'live' | 'test' } = {}) {
  const user = await t.fixtures.user(accountId);
  await t.database.db.updateTable('users').set({ role }).where('id', '=', user.id).execute();
  const key = (await t.fixtures.key(user.id, { permissions: options.permissions ?? MANAGER, mode: options.mode })).key;
  return { user, key };
}

const link = (key: string, id: number | string) => t.json(`/api/v1/users/${id}/sign-in-link`, { key, method: 'POST' });
const tokenOf = (url: string) => new URLSearchParams(new URL(url).hash.slice(1)).get('token');
const setPassword = (token: string | null, password: string) => t.json('/api/v1/auth/set-password', { method: 'POST', body: { token, password } });
const signIn = (email: string, password: string) => t.call('/api/v1/auth/sign-in', { method: 'POST', body: { email, password } });

describe('POST /users/{id}/sign-in-link', () => {
  it('answers a link that works once: it sets the password, ends the user\'s sessions, and the user signs in with it', async () => {
    const { id: accountId } = await t.fixtures.account();
    const owner = await member(accountId, 'owner');
    const dispatcher = await member(accountId, 'dispatcher');

    const before = Date.now();
    const issued = await link(owner.key, dispatcher.user.id);
    expect(issued.status).toBe(201);
    expect(Object.keys(issued.body.data).sort()).toEqual(['expiresAt', 'url']);
    const url = new URL(issued.body.data.url);
    // No PUBLIC_URL here: the link starts with the origin the request came to.
    expect(`${url.origin}${url.pathname}`).toBe('http://localhost/map/set-password');
    expect(url.search).toBe('');
    expect(tokenOf(issued.body.data.url)).toMatch(/^fsi_[\w-]{40,}$/);
    const expires = Date.parse(issued.body.data.expiresAt);
    expect(expires - before).toBeGreaterThan(23.9 * 3_600_000);
    expect(expires - before).toBeLessThanOrEqual(24 * 3_600_000 + 60_000);

    expect((await signIn(dispatcher.user.email, 'a brand new password')).status).toBe(401);
    expect(await setPassword(tokenOf(issued.body.data.url), 'a brand new password')).toMatchObject({ status: 200, body: { data: { email: dispatcher.user.email } } });
    const session = await signIn(dispatcher.user.email, 'a brand new password');
    expect(session.status).toBe(200);
    const cookie = session.headers.get('set-cookie')!.split(';')[0]!;
    expect((await t.call('/api/v1/auth/session', { headers: { Cookie: cookie } })).status).toBe(200);

    // Used once, it is spent.
    expect(await setPassword(tokenOf(issued.body.data.url), 'another new password 1')).toMatchObject({ status: 400, body: { error: expect.stringMatching(/already used/) } });

    // A second link replaces the password and ends the session signed in with the first.
    const again = await link(owner.key, dispatcher.user.id);
    expect(again.status).toBe(201);
    expect(tokenOf(again.body.data.url)).not.toBe(tokenOf(issued.body.data.url));
    expect((await setPassword(tokenOf(again.body.data.url), 'the third password')).status).toBe(200);
    expect((await t.call('/api/v1/auth/session', { headers: { Cookie: cookie } })).status).toBe(401);
    expect((await signIn(dispatcher.user.email, 'a brand new password')).status).toBe(401);
    expect((await signIn(dispatcher.user.email, 'the third password')).status).toBe(200);

    // Each link is in the audit log, with who asked and for whom; never the link itself.
    const audit = await t.json('/api/v1/audit?action=user.sign_in_link_issued', { key: owner.key });
    expect(audit.status).toBe(200);
    expect(audit.body.data).toHaveLength(2);
    expect(audit.body.data[0]).toMatchObject({
      action: 'user.sign_in_link_issued', target: { type: 'user', id: String(dispatcher.user.id) },
      actor: { kind: 'api_key', userId: owner.user.id }, details: { email: dispatcher.user.email, expiresAt: again.body.data.expiresAt },
    });
    expect(JSON.stringify(audit.body.data)).not.toContain('fsi_');
  });

  it('is issued only by users:write, in live mode, within the account; only an owner issues one for an owner', async () => {
    const { id: accountId } = await t.fixtures.account();
    const owner = await member(accountId, 'owner');
    const admin = await member(accountId, 'admin');
    const viewer = await member(accountId, 'viewer');
    const reader = await member(accountId, 'admin', { permissions: ['*', 'users:read'] });
    const testKey = (await t.fixtures.key(owner.user.id, { mode: 'test', permissions: MANAGER })).key;
    const { id: otherAccount } = await t.fixtures.account();
    const stranger = await member(otherAccount, 'owner');

    expect(await link(reader.key, viewer.user.id)).toMatchObject({ status: 403, body: { error: expect.stringMatching(/users:write/) } });
    expect(await link(testKey, viewer.user.id)).toMatchObject({ status: 403, body: { error: expect.stringMatching(/test-mode key or token cannot issue/) } });
    // Another account's user is not found, exactly as one that does not exist.
    const foreign = await link(owner.key, stranger.user.id);
    const missing = await link(owner.key, 2_000_000_000);
    expect(foreign).toMatchObject({ status: 404 });
    expect(foreign.body.error).toBe(missing.body.error);
    expect(await link(owner.key, 'abc')).toMatchObject({ status: 400 });

    // An admin may not take over an owner by their link; an admin's link for a viewer, or their own, is fine.
    expect(await link(admin.key, owner.user.id)).toMatchObject({ status: 403, body: { error: 'only an owner can make, change or remove an owner' } });
    expect((await link(admin.key, viewer.user.id)).status).toBe(201);
    expect((await link(admin.key, admin.user.id)).status).toBe(201);
    expect((await link(owner.key, owner.user.id)).status).toBe(201);

    // The refusals issued nothing and recorded nothing.
    const rows = await t.database.db.selectFrom('sign_in_tokens').select('user_id').where('user_id', 'in', [owner.user.id, viewer.user.id, admin.user.id, stranger.user.id]).execute();
    expect(rows.map((r) => r.user_id).sort()).toEqual([owner.user.id, viewer.user.id, admin.user.id].sort());
    const audit = await t.json('/api/v1/audit?action=user.*', { key: owner.key });
    expect(audit.body.data.filter((e: { action: string }) => e.action === 'user.sign_in_link_issued')).toHaveLength(3);
  });

  it('starts the link with PUBLIC_URL when it is set', async () => {
    const { createApp } = await import('../api/app.ts');
    const { createMemoryRateLimiter } = await import('../api/rate-limit/memory-rate-limiter.ts');
    const { silentLogger } = await import('../runtime/logger.ts');
    const { TEST_CONFIG } = await import('./support/test-app.ts');
    const app = createApp({
      db: t.database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(1000, 10_000), config: TEST_CONFIG,
      sessions: { idleMs: 3_600_000, maxMs: 86_400_000, publicUrl: 'https://fleet.example.com/' },
    });
    const { id: accountId } = await t.fixtures.account();
    const owner = await member(accountId, 'owner');
    const viewer = await member(accountId, 'viewer');
    const response = await app.request(`/api/v1/users/${viewer.user.id}/sign-in-link`, { method: 'POST', headers: { Authorization: `Bearer ${owner.key}` } });
    expect(response.status).toBe(201);
    expect(((await response.json()) as { data: { url: string } }).data.url).toMatch(/^https:\/\/fleet\.example\.com\/map\/set-password#token=fsi_/);
  });
});
