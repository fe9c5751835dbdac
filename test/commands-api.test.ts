import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markCommandSent } from '../db/commands.ts';
import type { Device } from '../db/schema.ts';
import { InProcessCommandBus } from '../ingest/commands/command-bus.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

// POST/GET/DELETE /commands through the real app: who may send, what each protocol can take, the
// record and its audit trail, idempotency, the safe stop rule, paging, isolation and cancellation.

let t: TestApp;
const notified: number[] = [];
let key: string;
let keyPrefix: string;
let userId: number;
let accountId: number;
let teltonika: Device;
let gt06: Device;
let unknownProtocol: Device;

const post = (body: unknown, options: { key?: string; headers?: Record<string, string> } = {}) =>
  t.json('/api/v1/commands', { key: options.key ?? key, method: 'POST', body, headers: options.headers });

beforeAll(async () => {
  const bus = new InProcessCommandBus();
  await bus.listen((deviceId) => notified.push(deviceId));
  t = await startTestApp({ commandBus: bus });
  const account = await t.fixtures.account();
  accountId = account.id;
  const user = await t.fixtures.user(account.id);
  userId = user.id;
  const row = await t.fixtures.key(user.id, { permissions: ['*', 'commands:write', 'commands:custom', 'audit:read'] });
  key = row.key;
  keyPrefix = row.prefix;
  teltonika = await t.fixtures.device(account.id, { userIds: [user.id], protocol: 'teltonika', name: 'Teltonika truck' });
  gt06 = await t.fixtures.device(account.id, { userIds: [user.id], protocol: 'gt06', name: 'GT06 van' });
  unknownProtocol = await t.fixtures.device(account.id, { userIds: [user.id], name: 'New truck' });
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe('POST /commands', () => {
  it('needs commands:write, which * does not hold, and a key holding it by name sends', async () => {
    const star = (await t.fixtures.key(userId, { permissions: ['*'] })).key;
    const refused = await post({ deviceId: teltonika.imei, type: 'siren_on' }, { key: star });
    expect(refused).toMatchObject({ status: 403, body: { error: 'This API key lacks the commands:write permission' } });
    // Reading is part of *.
    expect((await t.json('/api/v1/commands', { key: star })).status).toBe(200);
    const named = (await t.fixtures.key(userId, { permissions: ['commands:write'] })).key;
    expect((await post({ deviceId: teltonika.imei, type: 'siren_on' }, { key: named })).status).toBe(202);
  });

  it('answers 202 with the queued record, its expiry and who sent it, and wakes the holder of the connection', async () => {
    notified.length = 0;
    const before = Date.now();
    const { status, body } = await post({ deviceId: teltonika.imei, type: 'engine_resume', ttlSeconds: 600 });
    expect(status).toBe(202);
    expect(body.data).toMatchObject({
      deviceId: teltonika.imei, type: 'engine_resume', params: {}, text: null, status: 'queued', reason: null, attempts: 0, maxAttempts: 3,
      sentAt: null, acknowledgedAt: null, finishedAt: null, response: null, error: null, idempotencyKey: null,
      issuedBy: { keyPrefix, userId, address: null },
    });
    expect(body.data.issuedBy.keyId).toEqual(expect.any(Number));
    const created = Date.parse(body.data.createdAt);
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(body.data.expiresAt) - created).toBeGreaterThanOrEqual(599_000);
    expect(Date.parse(body.data.expiresAt) - created).toBeLessThanOrEqual(601_000);
    expect(notified).toEqual([teltonika.id]);
    const again = await t.json(`/api/v1/commands/${body.data.id}`, { key });
    expect(again.body.data).toEqual(body.data);
  });

  it('refuses a type the device\'s protocol cannot express, naming the protocol, and params it cannot take', async () => {
    const photo = await post({ deviceId: gt06.imei, type: 'siren_on' });
    expect(photo.status).toBe(400);
    expect(photo.body.error).toBe(`Device ${gt06.imei} cannot take this command: the gt06 protocol cannot express siren_on (it can: engine_stop, engine_resume, custom)`);
    expect((await post({ deviceId: teltonika.imei, type: 'take_photo' })).body.error).toMatch(/the teltonika protocol cannot express take_photo/);
    expect((await post({ deviceId: unknownProtocol.imei, type: 'engine_stop' })).body.error).toMatch(/has no protocol yet/);
    expect((await post({ deviceId: teltonika.imei, type: 'engine_stop', params: { output: 9 } })).body.error).toBe('teltonika: params.output must be a whole number from 1 to 4');
    expect((await post({ deviceId: gt06.imei, type: 'engine_stop', params: { variant: 'dyd', password: '12' } })).body.error).toBe('gt06: params.password must be six digits');
    const before = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM commands`.execute(t.database.db)).rows[0]!.n;
    expect((await post({ deviceId: teltonika.imei, type: 'custom', text: 'getinfo\u0007' })).body.error).toMatch(/printable ASCII/);
    expect((await sql<{ n: number }>`SELECT count(*)::int AS n FROM commands`.execute(t.database.db)).rows[0]!.n).toBe(before);
  });

  it.each([
    [{ type: 'custom' }, 'text is required for a custom command'],
    [{ type: 'siren_on', text: 'x' }, 'text is only for custom commands; the other types are encoded from type and params'],
    [{ type: 'engine_stop', params: { force: 'yes' } }, 'params.force must be true or false'],
    [{ type: 'engine_stop', ttlSeconds: 0 }, /ttlSeconds/],
    [{ type: 'engine_stop', maxAttempts: 11 }, /maxAttempts/],
    [{ type: 'engine_explode' }, /type/],
    [{ type: 'engine_stop', params: { pad: 'x'.repeat(3000) } }, 'params must be at most 2048 characters as JSON'],
  ])('refuses %j with 400', async (fields, message) => {
    const { status, body } = await post({ deviceId: teltonika.imei, ...fields });
    expect(status).toBe(400);
    expect(body.error).toMatch(message);
  });

  it('answers 404 for a device of another account, of another user, or of the other mode', async () => {
    const other = await t.fixtures.tenant();
    const theirs = await t.fixtures.device(other.account.id, { userIds: [other.user.id], protocol: 'teltonika' });
    const colleague = await t.fixtures.user(accountId);
    const notMine = await t.fixtures.device(accountId, { userIds: [colleague.id], protocol: 'teltonika' });
    const testMode = await t.fixtures.device(accountId, { userIds: [userId], protocol: 'teltonika', mode: 'test' });
    for (const device of [theirs, notMine, testMode]) {
      expect(await post({ deviceId: device.imei, type: 'siren_on' })).toMatchObject({ status: 404, body: { error: 'Device not found or no access' } });
    }
  });

  it('returns the first command for a repeated idempotency key, in the body or the Idempotency-Key header, and 422 for another request under it', async () => {
    notified.length = 0;
    const first = await post({ deviceId: teltonika.imei, type: 'siren_on', idempotencyKey: 'siren-42' });
    const again = await post({ deviceId: teltonika.imei, type: 'siren_on' }, { headers: { 'Idempotency-Key': '"siren-42"' } });
    expect(again.status).toBe(202);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(first.headers.get('Idempotent-Replayed')).toBeNull();
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(notified).toEqual([teltonika.id]);
    const different = await post({ deviceId: teltonika.imei, type: 'siren_off', idempotencyKey: 'siren-42' });
    expect(different.status).toBe(422);
    expect(different.body.error).toMatch(new RegExp(`another command \\(${first.body.data.id}\\)`));
    const both = await post({ deviceId: teltonika.imei, type: 'siren_on', idempotencyKey: 'a' }, { headers: { 'Idempotency-Key': 'b' } });
    expect(both).toMatchObject({ status: 400, body: { error: expect.stringMatching(/differ/) } });
    // The key is per API key: another key's same string is another command.
    const otherKey = (await t.fixtures.key(userId, { permissions: ['commands:write', 'commands:read'] })).key;
    const theirs = await post({ deviceId: teltonika.imei, type: 'siren_on', idempotencyKey: 'siren-42' }, { key: otherKey });
    expect(theirs.body.data.id).not.toBe(first.body.data.id);
  });

  it('says why an engine stop waits: a fix faster than 20 km/h, or no current valid fix; force overrides', async () => {
    const at = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000);
    const fast = await t.fixtures.device(accountId, { userIds: [userId], protocol: 'teltonika' });
    await t.fixtures.fix(fast.id, { fixTime: at(1), valid: true, latitude: 19.4, longitude: -99.1, speedKmh: 64 });
    const held = await post({ deviceId: fast.imei, type: 'engine_stop' });
    expect(held.body.data).toMatchObject({ status: 'queued', reason: 'waiting for the vehicle to slow down' });
    const forced = await post({ deviceId: fast.imei, type: 'engine_stop', params: { force: true } });
    expect(forced.body.data).toMatchObject({ status: 'queued', reason: null, params: { force: true } });
    // Other types are never held.
    expect((await post({ deviceId: fast.imei, type: 'siren_on' })).body.data.reason).toBeNull();
    const slow = await t.fixtures.device(accountId, { userIds: [userId], protocol: 'teltonika' });
    await t.fixtures.fix(slow.id, { fixTime: at(1), valid: true, latitude: 19.4, longitude: -99.1, speedKmh: 20 });
    expect((await post({ deviceId: slow.imei, type: 'engine_stop' })).body.data.reason).toBeNull();
    // A parked fix from minutes ago, an invalid one, or none at all: nothing says how fast it goes now.
    const parkedLongAgo = await t.fixtures.device(accountId, { userIds: [userId], protocol: 'teltonika' });
    await t.fixtures.fix(parkedLongAgo.id, { fixTime: at(300), valid: true, latitude: 19.4, longitude: -99.1, speedKmh: 0 });
    const invalid = await t.fixtures.device(accountId, { userIds: [userId], protocol: 'teltonika' });
    await t.fixtures.fix(invalid.id, { fixTime: at(1), valid: false, latitude: 19.4, longitude: -99.1, speedKmh: 0 });
    const neverReported = await t.fixtures.device(accountId, { userIds: [userId], protocol: 'teltonika' });
    for (const device of [parkedLongAgo, invalid, neverReported]) {
      expect((await post({ deviceId: device.imei, type: 'engine_stop' })).body.data).toMatchObject({ status: 'queued', reason: 'waiting for a current fix from the vehicle' });
    }
  });

  it('sends raw text only with commands:custom, granted by name, and audits it with its text and without device passwords', async () => {
    const writer = (await t.fixtures.key(userId, { permissions: ['*', 'commands:write'] })).key;
    const refused = await post({ deviceId: teltonika.imei, type: 'custom', text: 'setdigout 1' }, { key: writer });
    expect(refused).toMatchObject({ status: 403, body: { error: expect.stringMatching(/lacks the commands:custom permission/) } });
    const custom = (await t.fixtures.key(userId, { permissions: ['commands:write', 'commands:custom'] })).key;
    const sent = await post({ deviceId: teltonika.imei, type: 'custom', text: 'setdigout 1' }, { key: custom });
    expect(sent).toMatchObject({ status: 202, body: { data: { type: 'custom', text: 'setdigout 1' } } });
    // Typed commands still need only commands:write.
    expect((await post({ deviceId: gt06.imei, type: 'engine_resume' }, { key: writer })).status).toBe(202);

    const dyd = await post({ deviceId: gt06.imei, type: 'engine_stop', params: { variant: 'dyd', password: '654321', force: true } });
    expect(dyd.status).toBe(202);
    expect(dyd.body.data.params).toEqual({ variant: 'dyd', password: '[redacted]', force: true });
    const stored = await sql<{ params: Record<string, unknown> }>`SELECT params FROM commands WHERE id = ${dyd.body.data.id}`.execute(t.database.db);
    expect(stored.rows[0]!.params.password).toBe('654321');

    const audit = await t.json('/api/v1/audit?action=command.created&limit=500', { key });
    const entry = (id: string) => audit.body.data.find((e: any) => e.target.id === id);
    expect(entry(sent.body.data.id).details).toMatchObject({ type: 'custom', text: 'setdigout 1' });
    expect(entry(dyd.body.data.id).details.params).toEqual({ variant: 'dyd', password: '[redacted]', force: true });
    expect(JSON.stringify(audit.body)).not.toContain('654321');
  });
});

describe('GET /commands', () => {
  it('pages newest first, each command once, filtered by device and status, with cursors bound to both', async () => {
    const device = await t.fixtures.device(accountId, { userIds: [userId], protocol: 'teltonika' });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await post({ deviceId: device.imei, type: i % 2 ? 'siren_on' : 'siren_off' })).body.data.id);
    await markCommandSent(t.database.db, ids[1]!);
    await markCommandSent(t.database.db, ids[4]!);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await t.json(`/api/v1/commands?deviceId=${device.imei}&limit=3${cursor ? `&cursor=${cursor}` : ''}`, { key });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((c: any) => c.id));
      cursor = page.body.next_cursor;
      expect(page.body.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());

    const sent = await t.json(`/api/v1/commands?deviceId=${device.imei}&status=sent`, { key });
    expect(sent.body.data.map((c: any) => c.id)).toEqual([ids[4], ids[1]]);
    const queued = await t.json(`/api/v1/commands?deviceId=${device.imei}&status=queued,cancelled&limit=2`, { key });
    expect(queued.body.data.map((c: any) => c.id)).toEqual([ids[6], ids[5]]);
    // The cursor belongs to its filters and its owner.
    const refused = await t.json(`/api/v1/commands?deviceId=${device.imei}&status=sent&limit=2&cursor=${queued.body.next_cursor}`, { key });
    expect(refused).toMatchObject({ status: 400, body: { error: expect.stringMatching(/other filters/) } });
    const colleague = await t.fixtures.user(accountId);
    const theirKey = (await t.fixtures.key(colleague.id)).key;
    const stolen = await t.json(`/api/v1/commands?deviceId=${device.imei}&status=queued,cancelled&limit=2&cursor=${queued.body.next_cursor}`, { key: theirKey });
    expect(stolen.status).toBe(400);
    expect((await t.json('/api/v1/commands?cursor=garbage', { key })).status).toBe(400);
  });

  it('shows a key only the commands of the vehicles its user sees, in its mode', async () => {
    const colleague = await t.fixtures.user(accountId);
    const theirKey = (await t.fixtures.key(colleague.id)).key;
    const mine = (await post({ deviceId: teltonika.imei, type: 'siren_on' })).body.data.id;
    const theirs = await t.json('/api/v1/commands?limit=500', { key: theirKey });
    expect(theirs.body.data).toEqual([]);
    expect((await t.json(`/api/v1/commands/${mine}`, { key: theirKey })).status).toBe(404);
    const testKey = (await t.fixtures.key(userId, { mode: 'test' })).key;
    expect((await t.json('/api/v1/commands?limit=500', { key: testKey })).body.data).toEqual([]);
    const other = await t.fixtures.tenant();
    expect((await t.json(`/api/v1/commands/${mine}`, { key: other.key })).status).toBe(404);
    expect((await t.json('/api/v1/commands?limit=500', { key })).body.data.map((c: any) => c.id)).toContain(mine);
  });
});

describe('DELETE /commands/{id}', () => {
  it('cancels a queued command (an event says so, the holder is woken) and refuses one already sent', async () => {
    notified.length = 0;
    const queued = (await post({ deviceId: gt06.imei, type: 'engine_resume' })).body.data.id;
    const sent = (await post({ deviceId: gt06.imei, type: 'custom', text: 'WHERE#' })).body.data.id;
    await markCommandSent(t.database.db, sent);
    notified.length = 0;
    const cancelled = await t.json(`/api/v1/commands/${queued}`, { key, method: 'DELETE' });
    expect(cancelled).toMatchObject({ status: 200, body: { data: { id: queued, status: 'cancelled', finishedAt: expect.any(String) } } });
    expect(notified).toEqual([gt06.id]);
    expect(await t.json(`/api/v1/commands/${queued}`, { key, method: 'DELETE' })).toMatchObject({ status: 409, body: { error: 'Only a queued command can be cancelled; this one is cancelled' } });
    expect(await t.json(`/api/v1/commands/${sent}`, { key, method: 'DELETE' })).toMatchObject({ status: 409, body: { error: 'Only a queued command can be cancelled; this one is sent' } });
    const events = await t.json(`/api/v1/events?types=command.*&deviceIds=${gt06.imei}`, { key });
    expect(events.body.data.map((e: any) => [e.type, e.data.command.id])).toEqual(
      expect.arrayContaining([['command.cancelled', queued], ['command.sent', sent]]),
    );
    const star = (await t.fixtures.key(userId, { permissions: ['*'] })).key;
    expect((await t.json(`/api/v1/commands/${sent}`, { key: star, method: 'DELETE' })).status).toBe(403);
    // The audit log keeps who sent and who cancelled.
    const audit = await t.json('/api/v1/audit?action=command.*&limit=500', { key });
    const mine = audit.body.data.filter((e: any) => [queued, sent].includes(e.target.id)).map((e: any) => [e.action, e.target.id, e.details.deviceId]);
    expect(mine).toEqual([['command.cancelled', queued, gt06.imei], ['command.created', sent, gt06.imei], ['command.created', queued, gt06.imei]]);
  });
});
