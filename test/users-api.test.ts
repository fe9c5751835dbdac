import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintCredential } from '../api/auth/mint-credential.ts';
import type { Role } from '../domain/access/roles.ts';
import { eventually } from './support/eventually.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

// The account's users and their roles through the app: the users API within the account, the rules of
// who gives which role, the last owner kept under concurrent removals, and roles bounding every key.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const USERS = '/api/v1/users';
const MANAGER = ['*', 'users:read', 'users:write', 'keys:write', 'audit:read'];
let n = 0;
const email = (what: string) => `${what}-${Date.now()}-${n++}@example.test`;

async function member(accountId: number, role: Role, permissions = MANAGER) {
  const user = await t.fixtures.user(accountId);
  await t.database.db.updateTable('users').set({ role }).where('id', '=', user.id).execute();
  const key = (await t.fixtures.key(user.id, { permissions })).key;
  return { user, key };
}

async function account() {
  const { id } = await t.fixtures.account();
  const owner = await member(id, 'owner');
  return { id, owner };
}

const roleOf = async (id: number) => (await t.database.db.selectFrom('users').select('role').where('id', '=', id).executeTakeFirstOrThrow()).role;

describe('users API', () => {
  it('adds, lists, reads, changes and removes the account\'s users, validating each field', async () => {
    const { owner } = await account();
    const as = (method: string, path: string, body?: unknown) => t.json(`${USERS}${path}`, { key: owner.key, method, body });
    const address = email('ana');
    const created = await as('POST', '', { email: address.toUpperCase(), name: 'Ana', timezone: 'Europe/Madrid', role: 'dispatcher' });
    expect(created).toMatchObject({ status: 201, body: { data: { email: address, name: 'Ana', timezone: 'Europe/Madrid', role: 'dispatcher' } } });
    expect(Object.keys(created.body.data).sort()).toEqual(['createdAt', 'email', 'groups', 'id', 'name', 'role', 'timezone']);
    const id = created.body.data.id as number;
    const viewer = await as('POST', '', { email: email('v'), timezone: 'UTC' });
    expect(viewer.body.data).toMatchObject({ role: 'viewer', name: null });

    const list = await as('GET', '');
    expect(list.status).toBe(200);
    expect(list.body.data.map((u: { id: number }) => u.id)).toEqual([owner.user.id, id, viewer.body.data.id]);
    expect(await as('GET', `/${id}`)).toMatchObject({ status: 200, body: { data: { id, role: 'dispatcher' } } });

    expect(await as('POST', '', { email: 'not-an-email', timezone: 'UTC' })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/email/) } });
    expect(await as('POST', '', { email: email('x'), timezone: 'Mars/Olympus' })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/IANA/) } });
    expect(await as('POST', '', { email: email('x'), timezone: 'UTC', role: 'king' })).toMatchObject({ status: 400 });
    expect(await as('POST', '', { email: address, timezone: 'UTC' })).toMatchObject({ status: 409, body: { error: expect.stringMatching(/already exists/) } });
    expect(await as('PATCH', `/${viewer.body.data.id}`, { email: address })).toMatchObject({ status: 409 });

    const patched = await as('PATCH', `/${id}`, { name: 'Ana María', timezone: 'America/Bogota', role: 'viewer' });
    expect(patched).toMatchObject({ status: 200, body: { data: { id, name: 'Ana María', timezone: 'America/Bogota', role: 'viewer', email: address } } });
    expect(await as('PATCH', `/${id}`, { timezone: 'Nowhere/Land' })).toMatchObject({ status: 400 });

    expect(await as('DELETE', `/${id}`)).toMatchObject({ status: 200, body: { data: { id } } });
    expect(await as('GET', `/${id}`)).toMatchObject({ status: 404 });
    expect(await as('DELETE', `/${id}`)).toMatchObject({ status: 404 });
    expect((await as('GET', '')).body.data.map((u: { id: number }) => u.id)).not.toContain(id);
    // A removed user's email is free again.
    expect(await as('POST', '', { email: address, timezone: 'UTC' })).toMatchObject({ status: 201 });

    const audit = await t.json('/api/v1/audit?action=user.*', { key: owner.key });
    expect(audit.body.data.map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(['user.created', 'user.updated', 'user.removed']));
    const update = audit.body.data.find((e: { action: string; target: { id: string } }) => e.action === 'user.updated' && e.target.id === String(id));
    expect(update.details).toMatchObject({ roleFrom: 'dispatcher', roleTo: 'viewer' });
  });

  it('needs users:read and users:write, which * does not grant', async () => {
    const { id } = await account();
    const star = await member(id, 'owner', ['*']);
    for (const [method, path, body] of [['GET', ''], ['GET', '/1'], ['POST', '', { email: email('s'), timezone: 'UTC' }], ['PATCH', '/1', {}], ['DELETE', '/1']] as const) {
      const res = await t.json(`${USERS}${path}`, { key: star.key, method, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error).toMatch(/lacks the users:(read|write) permission/);
    }
  });

  it('serves every caller its own profile without users:* and changes only its name and timezone', async () => {
    const { id } = await account();
    const reader = await member(id, 'viewer', ['vehicles:read']);
    const me = await t.json(`${USERS}/me`, { key: reader.key });
    expect(me).toMatchObject({ status: 200, body: { data: { id: reader.user.id, role: 'viewer', email: reader.user.email } } });
    const changed = await t.json(`${USERS}/me`, { key: reader.key, method: 'PATCH', body: { name: 'Luis', timezone: 'Asia/Tokyo' } });
    expect(changed).toMatchObject({ status: 200, body: { data: { id: reader.user.id, name: 'Luis', timezone: 'Asia/Tokyo', role: 'viewer' } } });
    expect(await t.json(`${USERS}/me`, { key: reader.key, method: 'PATCH', body: { role: 'owner' } })).toMatchObject({ status: 400 });
    expect(await t.json(`${USERS}/me`, { key: reader.key, method: 'PATCH', body: { timezone: 'Bad/Zone' } })).toMatchObject({ status: 400 });
    expect(await roleOf(reader.user.id)).toBe('viewer');
  });

  it('keeps the role rules: no raising oneself, owners only by owners, nothing above one\'s own', async () => {
    const { id, owner } = await account();
    const admin = await member(id, 'admin');
    const as = (key: string, method: string, path: string, body?: unknown) => t.json(`${USERS}${path}`, { key, method, body });
    expect(await as(admin.key, 'POST', '', { email: email('o'), timezone: 'UTC', role: 'owner' })).toMatchObject({ status: 403, body: { error: expect.stringMatching(/only an owner/) } });
    expect(await as(admin.key, 'PATCH', `/${admin.user.id}`, { role: 'owner' })).toMatchObject({ status: 403, body: { error: expect.stringMatching(/cannot raise their own role/) } });
    expect(await as(admin.key, 'PATCH', `/${owner.user.id}`, { role: 'viewer' })).toMatchObject({ status: 403, body: { error: expect.stringMatching(/only an owner/) } });
    expect(await as(admin.key, 'PATCH', `/${owner.user.id}`, { name: 'Renamed' })).toMatchObject({ status: 403 });
    expect(await as(admin.key, 'DELETE', `/${owner.user.id}`)).toMatchObject({ status: 403 });
    expect(await roleOf(owner.user.id)).toBe('owner');
    const made = await as(admin.key, 'POST', '', { email: email('a'), timezone: 'UTC', role: 'admin' });
    expect(made).toMatchObject({ status: 201, body: { data: { role: 'admin' } } });
    expect(await as(owner.key, 'PATCH', `/${made.body.data.id}`, { role: 'owner' })).toMatchObject({ status: 200, body: { data: { role: 'owner' } } });
  });

  it('never demotes nor removes the last owner, and two concurrent removals leave one', async () => {
    const { id, owner } = await account();
    expect(await t.json(`${USERS}/${owner.user.id}`, { key: owner.key, method: 'PATCH', body: { role: 'admin' } })).toMatchObject({ status: 409, body: { error: expect.stringMatching(/last owner/) } });
    expect(await t.json(`${USERS}/${owner.user.id}`, { key: owner.key, method: 'DELETE' })).toMatchObject({ status: 409, body: { error: expect.stringMatching(/last owner/) } });
    const second = await member(id, 'owner');
    const third = await member(id, 'owner');
    // Each of two owners removes the other, and a third demotes the first, at once: at most two of the
    // three owners can go, whatever the order.
    const answers = await Promise.all([
      t.json(`${USERS}/${second.user.id}`, { key: owner.key, method: 'DELETE' }),
      t.json(`${USERS}/${owner.user.id}`, { key: second.key, method: 'DELETE' }),
      t.json(`${USERS}/${third.user.id}`, { key: third.key, method: 'PATCH', body: { role: 'viewer' } }),
    ]);
    const owners = await t.database.db.selectFrom('users').select('id').where('account_id', '=', id).where('role', '=', 'owner').where('removed_at', 'is', null).execute();
    expect(owners.length).toBeGreaterThanOrEqual(1);
    expect(answers.map((a) => a.status).every((s) => s === 200 || s === 409 || s === 401 || s === 403)).toBe(true);
    expect(answers.filter((a) => a.status === 200).length).toBeLessThanOrEqual(2);

    // Two owners left to race: each removes the other at once; exactly one wins.
    const { id: race } = await account();
    const [a, b] = [await member(race, 'owner'), await member(race, 'owner')];
    await t.database.db.updateTable('users').set({ role: 'viewer' }).where('account_id', '=', race).where('id', 'not in', [a.user.id, b.user.id]).execute();
    const both = await Promise.all([
      t.json(`${USERS}/${b.user.id}`, { key: a.key, method: 'DELETE' }),
      t.json(`${USERS}/${a.user.id}`, { key: b.key, method: 'DELETE' }),
    ]);
    // The loser finds either the last owner (409) or, when the winner's removal came first, itself removed (403).
    expect(both.filter((r) => r.status === 200)).toHaveLength(1);
    expect(both.find((r) => r.status !== 200)!.body.error).toMatch(/last owner|has been removed/);
    const left = await t.database.db.selectFrom('users').select('id').where('account_id', '=', race).where('role', '=', 'owner').where('removed_at', 'is', null).execute();
    expect(left).toHaveLength(1);
  });

  it('revokes a removed user\'s keys and OAuth clients and deletes their webhooks', async () => {
    const { id, owner } = await account();
    const gone = await member(id, 'admin', ['*', 'keys:write']);
    const hook = await t.json('/api/v1/webhooks', { key: gone.key, method: 'POST', body: { url: 'http://127.0.0.1:9/hook', events: ['vehicle.*'] } });
    expect(hook.status).toBe(201);
    const client = await t.json('/api/v1/oauth-clients', { key: gone.key, method: 'POST', body: { scopes: ['vehicles:read'] } });
    expect(client.status).toBe(201);
    const hour = new Date(Date.now() + 3_600_000);
    await t.database.db.updateTable('users').set({ password_hash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo' }).where('id', '=', gone.user.id).execute();
    await t.database.db.insertInto('user_sessions').values({ id: randomUUID(), token_hash: `gone-${gone.user.id}`, user_id: gone.user.id, expires_at: hour, idle_expires_at: hour }).execute();
    expect(await t.json(`${USERS}/${gone.user.id}`, { key: owner.key, method: 'DELETE' })).toMatchObject({ status: 200 });
    const session = await t.database.db.selectFrom('user_sessions').select('revoked_at').where('user_id', '=', gone.user.id).executeTakeFirstOrThrow();
    expect(session.revoked_at).not.toBeNull();
    expect((await t.database.db.selectFrom('users').select('password_hash').where('id', '=', gone.user.id).executeTakeFirstOrThrow()).password_hash).toBeNull();
    expect(await t.json('/api/v1/vehicles', { key: gone.key })).toMatchObject({ status: 401 });
    const clients = await t.database.db.selectFrom('oauth_clients').select('revoked_at').where('user_id', '=', gone.user.id).execute();
    expect(clients.length).toBe(1);
    expect(clients[0]!.revoked_at).not.toBeNull();
    expect(await t.database.db.selectFrom('webhooks').select('id').where('user_id', '=', gone.user.id).execute()).toEqual([]);
    const removal = await t.json('/api/v1/audit?action=user.removed', { key: owner.key });
    expect(removal.status, JSON.stringify(removal.body)).toBe(200);
    expect(removal.body.data[0].details).toMatchObject({ apiKeysRevoked: 1, oauthClientsRevoked: 1, webhooksDeleted: 1 });
  });

  it('answers 404 for another account\'s users and changes nothing of theirs', async () => {
    const mine = await account();
    const theirs = await account();
    const victim = await member(theirs.id, 'viewer');
    for (const [method, body] of [['GET'], ['PATCH', { role: 'admin', name: 'x' }], ['DELETE']] as const) {
      expect(await t.json(`${USERS}/${victim.user.id}`, { key: mine.owner.key, method, body }), method).toMatchObject({ status: 404 });
    }
    expect((await t.json(USERS, { key: mine.owner.key })).body.data.map((u: { id: number }) => u.id)).toEqual([mine.owner.user.id]);
    const row = await t.database.db.selectFrom('users').selectAll().where('id', '=', victim.user.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ role: 'viewer', name: null, removed_at: null });
  });
});

describe('users are the account\'s, in both modes', () => {
  const REFUSED = 'Users are the account\'s, in both modes: a test-mode key or token cannot add, change or remove them; use a live key';

  /** A token of an OAuth client the key mints in its own mode, with the given scopes. */
  async function tokenOf(key: string, scopes: string[]): Promise<string> {
    const client = await t.json('/api/v1/oauth-clients', { key, method: 'POST', body: { scopes } });
    expect(client.status).toBe(201);
    const res = await t.call('/oauth/token', {
      method: 'POST', body: 'grant_type=client_credentials',
      headers: { Authorization: `Basic ${Buffer.from(`${client.body.data.clientId}:${client.body.data.clientSecret}`).toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  it('refuses every user write of a test-mode key or token given users:write by name, and changes nothing', async () => {
    const { id, owner } = await account();
    const target = await member(id, 'viewer');
    const testKey = (await t.fixtures.key(owner.user.id, { mode: 'test', permissions: MANAGER })).key;
    const testToken = await tokenOf(testKey, ['users:read', 'users:write']);
    const before = await t.database.db.selectFrom('users').selectAll().where('account_id', '=', id).orderBy('id').execute();
    for (const [credential, label] of [[testKey, 'test key'], [testToken, 'test token']] as const) {
      const writes = [
        ['POST', USERS, { email: email('grab'), timezone: 'UTC', role: 'owner' }],
        ['PATCH', `${USERS}/${target.user.id}`, { role: 'admin', name: 'Raised' }],
        ['DELETE', `${USERS}/${target.user.id}`],
        ['PATCH', `${USERS}/me`, { timezone: 'Asia/Tokyo' }],
      ] as const;
      for (const [method, path, body] of writes) {
        expect(await t.json(path, { key: credential, method, body }), `${label} ${method} ${path}`).toMatchObject({ status: 403, body: { error: REFUSED } });
      }
      // Reading stays open to users:read: the account's users are the same in both modes.
      const list = await t.json(USERS, { key: credential });
      expect(list.status, label).toBe(200);
      expect(list.body.data.map((u: { id: number }) => u.id)).toEqual([owner.user.id, target.user.id]);
      expect(await t.json(`${USERS}/${target.user.id}`, { key: credential })).toMatchObject({ status: 200, body: { data: { id: target.user.id } } });
      expect(await t.json(`${USERS}/me`, { key: credential })).toMatchObject({ status: 200, body: { data: { id: owner.user.id } } });
    }
    expect(await t.database.db.selectFrom('users').selectAll().where('account_id', '=', id).orderBy('id').execute()).toEqual(before);
    const audit = await t.json('/api/v1/audit?action=user.*', { key: owner.key });
    expect(audit.body.data).toEqual([]);
    // The same writes with the live key of the same user go through.
    expect(await t.json(`${USERS}/${target.user.id}`, { key: owner.key, method: 'PATCH', body: { name: 'Changed live' } })).toMatchObject({ status: 200 });
    expect(await t.json(`${USERS}/me`, { key: owner.key, method: 'PATCH', body: { timezone: 'Asia/Tokyo' } })).toMatchObject({ status: 200 });
  });

  it('answers each user\'s groups of the caller\'s mode on every read and write', async () => {
    const { id, owner } = await account();
    const ana = await member(id, 'viewer', ['vehicles:read']);
    const testKey = (await t.fixtures.key(owner.user.id, { mode: 'test', permissions: MANAGER })).key;
    const group = async (key: string, name: string, userIds: number[]) => {
      const res = await t.json('/api/v1/groups', { key, method: 'POST', body: { name, user_ids: userIds } });
      expect(res.status).toBe(201);
      return { id: res.body.data.id as number, name };
    };
    const north = await group(owner.key, 'North depot', [ana.user.id, owner.user.id]);
    const east = await group(owner.key, 'East depot', [ana.user.id]);
    const lab = await group(testKey, 'Test lab', [ana.user.id]);
    const groupsIn = (list: Array<{ id: number; groups: unknown }>, userId: number) => list.find((u) => u.id === userId)?.groups;

    const live = (await t.json(USERS, { key: owner.key })).body.data;
    expect(groupsIn(live, ana.user.id)).toEqual([east, north]);
    expect(groupsIn(live, owner.user.id)).toEqual([north]);
    expect(await t.json(`${USERS}/${ana.user.id}`, { key: owner.key })).toMatchObject({ status: 200, body: { data: { groups: [east, north] } } });
    expect((await t.json(`${USERS}/me`, { key: ana.key })).body.data.groups).toEqual([east, north]);
    expect((await t.json(`${USERS}/me`, { key: ana.key, method: 'PATCH', body: { name: 'Ana' } })).body.data.groups).toEqual([east, north]);
    expect((await t.json(`${USERS}/${ana.user.id}`, { key: owner.key, method: 'PATCH', body: { name: 'Ana B' } })).body.data.groups).toEqual([east, north]);
    const added = await t.json(USERS, { key: owner.key, method: 'POST', body: { email: email('new'), timezone: 'UTC' } });
    expect(added).toMatchObject({ status: 201, body: { data: { groups: [] } } });

    // A test key answers the test groups only.
    const test = (await t.json(USERS, { key: testKey })).body.data;
    expect(groupsIn(test, ana.user.id)).toEqual([lab]);
    expect(groupsIn(test, owner.user.id)).toEqual([]);
    expect((await t.json(`${USERS}/${ana.user.id}`, { key: testKey })).body.data.groups).toEqual([lab]);

    // A group that lets the user go is gone from the user's answers.
    expect((await t.json(`/api/v1/groups/${north.id}`, { key: owner.key, method: 'PATCH', body: { user_ids: [owner.user.id] } })).status).toBe(200);
    expect((await t.json(`${USERS}/${ana.user.id}`, { key: owner.key })).body.data.groups).toEqual([east]);
    const removed = await t.json(`${USERS}/${ana.user.id}`, { key: owner.key, method: 'DELETE' });
    expect(removed).toMatchObject({ status: 200, body: { data: { id: ana.user.id, groups: [east] } } });
  });
});

describe('roles bound credentials', () => {
  it('limits a key to its user\'s current role: a lowered role holds at once on existing keys', async () => {
    const { id, owner } = await account();
    const user = await member(id, 'admin', ['*', 'keys:write']);
    const vehicle = { imei: `35${String(Date.now()).slice(-13)}`, name: `Role van ${n++}`, plates: 'R-1' };
    expect((await t.json('/api/v1/vehicles', { key: user.key, method: 'POST', body: vehicle })).status).toBe(201);
    expect(await t.json(`${USERS}/${user.user.id}`, { key: owner.key, method: 'PATCH', body: { role: 'viewer' } })).toMatchObject({ status: 200 });
    const refused = await t.json('/api/v1/vehicles', { key: user.key, method: 'POST', body: { ...vehicle, imei: `36${String(Date.now()).slice(-13)}`, name: `Role van ${n++}` } });
    expect(refused).toMatchObject({ status: 403, body: { error: expect.stringMatching(/lacks the vehicles:write permission/) } });
    expect((await t.json('/api/v1/vehicles', { key: user.key })).status).toBe(200);
  });

  it('holds a role changed elsewhere (another process, the CLI) within a second, through the credential cache', async () => {
    const { id } = await account();
    const user = await member(id, 'admin', ['*']);
    expect((await t.json('/api/v1/webhooks', { key: user.key })).status).toBe(200);
    await t.database.db.updateTable('users').set({ role: 'dispatcher' }).where('id', '=', user.user.id).execute();
    await eventually(() => t.json('/api/v1/webhooks', { key: user.key }), (res) => expect(res.status).toBe(403), 3_000);
  });

  it('refuses minting a key or client beyond the user\'s role, naming what is beyond, through the API and for the operator', async () => {
    const { id } = await account();
    const viewer = await member(id, 'viewer', ['*', 'keys:write']);
    const key = await t.json('/api/v1/api-keys', { key: viewer.key, method: 'POST', body: { permissions: ['vehicles:read', 'vehicles:write'] } });
    expect(key).toMatchObject({ status: 403, body: { error: expect.stringMatching(/viewer role does not grant vehicles:write/) } });
    const client = await t.json('/api/v1/oauth-clients', { key: viewer.key, method: 'POST', body: { scopes: ['*'] } });
    expect(client).toMatchObject({ status: 403, body: { error: expect.stringMatching(/viewer role does not grant \*/) } });
    expect(await t.json('/api/v1/api-keys', { key: viewer.key, method: 'POST', body: { permissions: ['vehicles:read'] } })).toMatchObject({ status: 201 });
    const actor = { kind: 'cli' as const, accountId: id, mode: 'live' as const, userId: null, remoteAddress: null };
    await expect(mintCredential(t.database.db, 'api_key', { userId: viewer.user.id, mode: 'live', name: null, grants: ['*'], expiresAt: null }, actor))
      .rejects.toThrow(/viewer role does not grant \*/);
  });
});
