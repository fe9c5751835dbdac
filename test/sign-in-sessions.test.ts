import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createApp } from '../api/app.ts';
import { hashPassword } from '../api/auth/password-hash.ts';
import { hashApiKey } from '../api/auth/api-key-token.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import { createRedisRateLimiter } from '../api/rate-limit/redis-rate-limiter.ts';
import { TrustedProxies } from '../api/trusted-proxies.ts';
import { connectRedis } from '../cli/redis-connection.ts';
import { insertSignInToken, setPasswordHash } from '../db/user-passwords.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { serveOverHttp } from './support/http-server.ts';
import { TEST_CONFIG } from './support/test-app.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

/**
 * Signing in with an email and a password over real HTTP: the cookie, CSRF, the slowdown of failed
 * sign-ins, the rule that Authorization alone judges a request carrying it, and ending sessions.
 * The limiters live in Redis when REDIS_URL is set, as in production.
 */
let database: TestDatabase;
let server: { url: string; close(): Promise<void> };
let redis: Redis | undefined;
const closers: Array<() => Promise<void>> = [];
const PASSWORD = 'correct horse battery';
let user: { id: number; email: string };
let key: string;

type Answer = { status: number; body: any; headers: Headers };

async function call(path: string, init: { method?: string; body?: unknown; cookie?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.cookie) headers.Cookie = init.cookie;
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${server.url}/api/v1${path}`, { method: init.method ?? 'GET', headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

async function signIn(email = user.email, password = PASSWORD, headers: Record<string, string> = {}) {
  const answer = await call('/auth/sign-in', { method: 'POST', body: { email, password }, headers });
  const setCookie = answer.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0]!;
  return { ...answer, setCookie, cookie, csrf: answer.body?.data?.csrfToken as string };
}

beforeAll(async () => {
  database = await openTestDatabase();
  redis = process.env.REDIS_URL ? await connectRedis(process.env.REDIS_URL) : undefined;
  const prefix = `fleetcore-test-${process.pid}-${Date.now()}`;
  const limiter = (max: number, name: string) => (redis ? createRedisRateLimiter(redis, max, 60_000, `${prefix}:${name}:`) : createMemoryRateLimiter(max, 60_000));
  const authFailureLimiter = limiter(100, 'auth-failures');
  const signInFailureLimiter = limiter(3, 'sign-in-failures');
  closers.push(() => authFailureLimiter.close(), () => signInFailureLimiter.close());
  const app = createApp({
    db: database.db, log: silentLogger, rateLimiter: createMemoryRateLimiter(100_000, 10_000), config: TEST_CONFIG,
    authFailureLimiter, signInFailureLimiter, oauth: { tokenTtlS: 3600 }, trustedProxies: new TrustedProxies(['127.0.0.1']),
  });
  server = await serveOverHttp(app);
  const f = fixtures(database.db);
  const account = await f.account();
  const row = await f.user(account.id);
  user = { id: row.id, email: row.email };
  await database.db.updateTable('users').set({ role: 'viewer' }).where('id', '=', row.id).execute();
  await setPasswordHash(database.db, row.id, await hashPassword(PASSWORD));
  key = (await f.key(row.id, { permissions: ['vehicles:read'] })).key;
});

afterAll(async () => {
  await server?.close();
  for (const close of closers) await close();
  redis?.disconnect();
  await database?.destroy();
});

describe('sign-in sessions', () => {
  it('signs in with a session cookie: HttpOnly, SameSite=Lax, Path=/, Secure only over HTTPS', async () => {
    const plain = await signIn();
    expect(plain.status).toBe(200);
    expect(plain.setCookie).toMatch(/^fleet_session=fss_/);
    expect(plain.setCookie).toMatch(/HttpOnly/);
    expect(plain.setCookie).toMatch(/SameSite=Lax/);
    expect(plain.setCookie).toMatch(/Path=\//);
    expect(plain.setCookie).not.toMatch(/Secure/);
    expect(plain.body.data).toMatchObject({ user: { id: user.id, email: user.email }, role: 'viewer' });
    expect(plain.body.data.permissions).toContain('vehicles:read');
    const proxied = await signIn(user.email, PASSWORD, { 'X-Forwarded-Proto': 'https' });
    expect(proxied.setCookie).toMatch(/; Secure/);

    const current = await call('/auth/session', { cookie: plain.cookie });
    expect(current.status).toBe(200);
    expect(current.body.data.csrfToken).toBe(plain.csrf);
    expect((await call('/vehicles', { cookie: plain.cookie })).status).toBe(200);
    // Only the hash of the token is stored.
    const token = plain.cookie.split('=')[1]!;
    const stored = await database.db.selectFrom('user_sessions').select('token_hash').where('token_hash', '=', hashApiKey(token)).execute();
    expect(stored).toHaveLength(1);
    expect(await database.db.selectFrom('user_sessions').select('id').where('token_hash', '=', token).execute()).toHaveLength(0);
  });

  it('answers an unknown email as a wrong password, and refuses a sign-in from another site', async () => {
    const wrong = await signIn(user.email, 'not the password');
    const unknown = await signIn('nobody@example.test', 'not the password');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(unknown.body.error).toBe(wrong.body.error);
    expect(wrong.setCookie).toBe('');
    const crossSite = await signIn(user.email, PASSWORD, { Origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
    expect(crossSite.setCookie).toBe('');
  });

  it('slows failed sign-ins per email: 429 with Retry-After, even for the right password', async () => {
    const f = fixtures(database.db);
    const victim = await f.user((await f.account()).id);
    await setPasswordHash(database.db, victim.id, await hashPassword(PASSWORD));
    for (let i = 0; i < 3; i++) expect((await signIn(victim.email, `guess ${i} wrong`)).status).toBe(401);
    const blocked = await signIn(victim.email, PASSWORD);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another account from the same address is not held back by this one's count.
    expect((await signIn()).status).toBe(200);
  });

  it('refuses a cookie write without the CSRF token or from another origin, and accepts it with the token', async () => {
    const s = await signIn();
    const body = { name: 'from the console', permissions: ['vehicles:read'] };
    const without = await call('/api-keys', { method: 'POST', cookie: s.cookie, body });
    expect(without.status).toBe(403);
    expect(without.body.error).toMatch(/CSRF token missing/);
    const wrongToken = await call('/api-keys', { method: 'POST', cookie: s.cookie, body, headers: { 'X-CSRF-Token': 'x'.repeat(43) } });
    expect(wrongToken.status).toBe(403);
    const crossOrigin = await call('/api-keys', { method: 'POST', cookie: s.cookie, body, headers: { 'X-CSRF-Token': s.csrf, Origin: 'https://evil.example' } });
    expect(crossOrigin.status).toBe(403);
    const crossSite = await call('/api-keys', { method: 'POST', cookie: s.cookie, body, headers: { 'X-CSRF-Token': s.csrf, 'Sec-Fetch-Site': 'cross-site' } });
    expect(crossSite.status).toBe(403);
    const ok = await call('/api-keys', { method: 'POST', cookie: s.cookie, body, headers: { 'X-CSRF-Token': s.csrf, Origin: server.url, 'Sec-Fetch-Site': 'same-origin' } });
    expect(ok.status).toBe(201);
  });

  it('judges a request with Authorization by it alone: the cookie never adds to it', async () => {
    const s = await signIn();
    // The key holds vehicles:read only; the session's role holds keys:read.
    expect((await call('/api-keys', { cookie: s.cookie })).status).toBe(200);
    expect((await call('/api-keys', { cookie: s.cookie, headers: { Authorization: `Bearer ${key}` } })).status).toBe(403);
    expect((await call('/vehicles', { cookie: s.cookie, headers: { Authorization: 'Bearer fc_live_not_a_key' } })).status).toBe(401);
    expect((await call('/auth/session', { cookie: s.cookie, headers: { Authorization: `Bearer ${key}` } })).status).toBe(400);
  });

  it('ends a session on sign-out and on revocation; sign out everywhere ends them all', async () => {
    const a = await signIn();
    const b = await signIn();
    const c = await signIn();
    const csrf = (s: { csrf: string }) => ({ 'X-CSRF-Token': s.csrf });
    expect((await call('/auth/sign-out', { method: 'POST', cookie: a.cookie, headers: csrf(a) })).status).toBe(204);
    expect((await call('/vehicles', { cookie: a.cookie })).status).toBe(401);

    const list = await call('/auth/sessions', { cookie: b.cookie });
    const other = list.body.data.find((s: any) => s.id === c.body.data.session.id);
    expect(other).toMatchObject({ current: false });
    expect(list.body.data.find((s: any) => s.current).id).toBe(b.body.data.session.id);
    expect((await call(`/auth/sessions/${other.id}`, { method: 'DELETE', cookie: b.cookie, headers: csrf(b) })).status).toBe(204);
    expect((await call('/vehicles', { cookie: c.cookie })).status).toBe(401);

    const d = await signIn();
    const everywhere = await call('/auth/sign-out-everywhere', { method: 'POST', cookie: b.cookie, headers: csrf(b) });
    expect(everywhere.status).toBe(200);
    expect((await call('/vehicles', { cookie: b.cookie })).status).toBe(401);
    expect((await call('/vehicles', { cookie: d.cookie })).status).toBe(401);
  });

  it('changes the password with the current one, ending the other sessions', async () => {
    const f = fixtures(database.db);
    const someone = await f.user((await f.account()).id);
    await setPasswordHash(database.db, someone.id, await hashPassword(PASSWORD));
    const here = await signIn(someone.email);
    const there = await signIn(someone.email);
    const change = (current: string, next: string) =>
      call('/auth/password', { method: 'POST', cookie: here.cookie, headers: { 'X-CSRF-Token': here.csrf }, body: { currentPassword: current, newPassword: next } });
    expect((await change('wrong password', 'a brand new password')).status).toBe(400);
    expect((await change(PASSWORD, 'short')).status).toBe(400);
    const changed = await change(PASSWORD, 'a brand new password');
    expect(changed.status).toBe(200);
    expect(changed.body.data.ended).toBe(1);
    expect((await call('/vehicles', { cookie: here.cookie })).status).toBe(200);
    expect((await call('/vehicles', { cookie: there.cookie })).status).toBe(401);
    expect((await signIn(someone.email, PASSWORD)).status).toBe(401);
    expect((await signIn(someone.email, 'a brand new password')).status).toBe(200);
  });

  it('sets a password with a one-time token, once', async () => {
    const f = fixtures(database.db);
    const fresh = await f.user((await f.account()).id);
    const token = 'fsi_test-token-' + Date.now();
    await insertSignInToken(database.db, hashApiKey(token), fresh.id, new Date(Date.now() + 60_000));
    const set = await call('/auth/set-password', { method: 'POST', body: { token, password: 'my first password' } });
    expect(set.status).toBe(200);
    expect(set.body.data.email).toBe(fresh.email);
    const again = await call('/auth/set-password', { method: 'POST', body: { token, password: 'another password here' } });
    expect(again.status).toBe(400);
    expect((await signIn(fresh.email, 'my first password')).status).toBe(200);
    expect((await signIn(fresh.email, 'another password here')).status).toBe(401);
  });
});
