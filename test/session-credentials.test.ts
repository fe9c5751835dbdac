import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../api/auth/password-hash.ts';
import { setPasswordHash } from '../db/user-passwords.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

// The keys and OAuth clients a signed-in session (the console) makes: of either mode, listed and
// revoked in both, never expiring unless told, and never a parent; while a key still reaches only
// its own mode's credentials.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const PASSWORD = 'console password 123';

async function session() {
  const { id: accountId } = await t.fixtures.account();
  const user = await t.fixtures.user(accountId);
  await setPasswordHash(t.database.db, user.id, await hashPassword(PASSWORD));
  const signedIn = await t.call('/api/v1/auth/sign-in', { method: 'POST', body: { email: user.email, password: PASSWORD } });
  expect(signedIn.status).toBe(200);
  const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
  const csrf = ((await (await t.call('/api/v1/auth/session', { headers: { Cookie: cookie } })).json()) as { data: { csrfToken: string } }).data.csrfToken;
  const as = (path: string, method = 'GET', body?: unknown) =>
    t.json(`/api/v1${path}`, { method, body, headers: { Cookie: cookie, ...(method === 'GET' ? {} : { 'X-CSRF-Token': csrf }) } });
  return { user, as };
}

describe('credentials a signed-in session makes', () => {
  it('mints API keys of either mode, lists and revokes both; a key of one mode reaches only its own', async () => {
    const { user, as } = await session();
    const live = await as('/api-keys', 'POST', { name: 'live one', permissions: ['vehicles:read'] });
    const test = await as('/api-keys', 'POST', { name: 'test one', permissions: ['vehicles:read', 'keys:read'], mode: 'test' });
    expect(live).toMatchObject({ status: 201, body: { data: { mode: 'live', expiresAt: null, mintedBy: null } } });
    expect(test).toMatchObject({ status: 201, body: { data: { mode: 'test', expiresAt: null, mintedBy: null } } });
    expect(test.body.data.key).toMatch(/^fc_test_/);
    expect(live.body.data.key).toMatch(/^fc_live_/);

    // The test key works, in test mode.
    expect((await t.json('/api/v1/vehicles', { key: test.body.data.key })).status).toBe(200);
    // The session lists both; each key lists only its own mode's.
    expect(((await as('/api-keys')).body.data as { name: string }[]).map((k) => k.name)).toEqual(['live one', 'test one']);
    expect(((await t.json('/api/v1/api-keys', { key: test.body.data.key })).body.data as { name: string }[]).map((k) => k.name)).toEqual(['test one']);

    // A key still mints only its own mode.
    const other = await t.fixtures.key(user.id, { permissions: ['*', 'keys:write'] });
    const refused = await t.json('/api/v1/api-keys', { key: other.key, method: 'POST', body: { permissions: ['vehicles:read'], mode: 'test' } });
    expect(refused).toMatchObject({ status: 400, body: { error: 'A live credential can only create live keys' } });
    // …and revokes only its own mode's: the test key is not found by a live key.
    expect((await t.json(`/api/v1/api-keys/${test.body.data.id}`, { key: other.key, method: 'DELETE' })).status).toBe(404);

    const revoked = await as(`/api-keys/${test.body.data.id}`, 'DELETE');
    expect(revoked).toMatchObject({ status: 200, body: { data: { id: test.body.data.id, mode: 'test' } } });
    expect(revoked.body.data.revokedAt).not.toBeNull();
    expect((await t.json('/api/v1/vehicles', { key: test.body.data.key })).status).toBe(401);
    expect((await t.json('/api/v1/vehicles', { key: live.body.data.key })).status).toBe(200);
  });

  it('registers OAuth clients of either mode; a mode it does not know is refused', async () => {
    const { as } = await session();
    const client = await as('/oauth-clients', 'POST', { name: 'sandbox partner', scopes: ['vehicles:read'], mode: 'test' });
    expect(client).toMatchObject({ status: 201, body: { data: { mode: 'test', expiresAt: null, scopes: ['vehicles:read'] } } });
    expect(((await as('/oauth-clients')).body.data as { mode: string }[]).map((c) => c.mode)).toEqual(['test']);
    expect((await as('/oauth-clients', 'POST', { scopes: ['vehicles:read'], mode: 'staging' })).status).toBe(400);
    expect((await as(`/oauth-clients/${client.body.data.id}`, 'DELETE')).status).toBe(200);
  });

  it('sets the expiry it is given, and none when it is given none (the session\'s end bounds nothing)', async () => {
    const { as } = await session();
    const at = new Date(Date.now() + 400 * 86_400_000).toISOString();
    expect(await as('/api-keys', 'POST', { permissions: ['vehicles:read'], expiresAt: at })).toMatchObject({ status: 201, body: { data: { expiresAt: at } } });
    expect(await as('/api-keys', 'POST', { permissions: ['vehicles:read'], expiresAt: new Date(Date.now() - 1000).toISOString() }))
      .toMatchObject({ status: 400, body: { error: 'expiresAt must be in the future' } });
  });
});
