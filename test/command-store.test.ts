import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgeCommand, cancelQueuedCommand, devicesWithOpenCommands, expireCommands, failCommand, holdCommand, markCommandSent, nextCommandFor, queueCommand, type NewCommand } from '../db/commands.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// The command record's state machine on the real database: idempotency, one command at a time per
// device, answers matched to the oldest sent command, expiry and cancellation only where allowed.

let database: TestDatabase;
let base: Omit<NewCommand, 'type' | 'idempotencyKey'>;
let keyId: number;

beforeAll(async () => {
  database = await openTestDatabase();
  const make = fixtures(database.db);
  const { account, user } = await make.tenant();
  const key = await make.key(user.id, { permissions: ['commands:write'] });
  keyId = key.id;
  const device = await make.device(account.id, { userIds: [user.id] });
  base = { accountId: account.id, deviceId: device.id, apiKeyId: key.id, userId: user.id, params: {}, text: null, expiresAt: new Date(Date.now() + 3_600_000) };
}, 60_000);
afterAll(async () => {
  await database?.destroy();
});

const clear = async () => {
  await sql`DELETE FROM commands`.execute(database.db);
  await sql`DELETE FROM events`.execute(database.db);
};
/** The command events logged, oldest first, as [type, command id, status, attempts]. */
const events = async () =>
  (await sql<{ type: string; data: any }>`SELECT type, data FROM events WHERE type LIKE 'command.%' ORDER BY id`.execute(database.db)).rows.map((e) => [
    e.type, e.data.command.id, e.data.command.status, e.data.command.attempts,
  ]);

describe('the command record', () => {
  it('finds the first command again for a repeated idempotency key of the same API key', async () => {
    await clear();
    const first = await queueCommand(database.db, { ...base, type: 'engine_stop', idempotencyKey: 'stop-1' });
    const again = await queueCommand(database.db, { ...base, type: 'engine_resume', idempotencyKey: 'stop-1' });
    expect(first.created).toBe(true);
    expect(again).toEqual({ command: first.command, created: false });
    const other = await queueCommand(database.db, { ...base, type: 'engine_stop', idempotencyKey: 'stop-2' });
    expect(other.command.id).not.toBe(first.command.id);
    // Without a key, every request is a command of its own.
    const a = await queueCommand(database.db, { ...base, type: 'siren_on', idempotencyKey: null });
    const b = await queueCommand(database.db, { ...base, type: 'siren_on', idempotencyKey: null });
    expect(a.command.id).not.toBe(b.command.id);
    expect(a.command).toMatchObject({ status: 'queued', attempts: 0, api_key_id: keyId });
  });

  it('gives a device its commands oldest first, one at a time, and matches an answer to the oldest sent', async () => {
    await clear();
    const stop = (await queueCommand(database.db, { ...base, type: 'engine_stop', idempotencyKey: null })).command;
    const resume = (await queueCommand(database.db, { ...base, type: 'engine_resume', idempotencyKey: null })).command;
    expect((await nextCommandFor(database.db, base.deviceId))?.id).toBe(stop.id);
    expect(await markCommandSent(database.db, stop.id)).toMatchObject({ status: 'sent', attempts: 1 });
    // Sent and unanswered, it stays first: the later one waits behind it, and a retry counts an attempt more.
    expect((await nextCommandFor(database.db, base.deviceId))?.id).toBe(stop.id);
    expect(await markCommandSent(database.db, stop.id)).toMatchObject({ attempts: 2 });

    const acked = await acknowledgeCommand(database.db, stop.id, 'DOUT1:1 Timeout:INFINITY');
    expect(acked).toMatchObject({ id: stop.id, status: 'acknowledged', response: 'DOUT1:1 Timeout:INFINITY' });
    expect(acked?.finished_at).toBeInstanceOf(Date);
    expect((await nextCommandFor(database.db, base.deviceId))?.id).toBe(resume.id);
    // Only a sent command can be acknowledged, and only once.
    expect(await acknowledgeCommand(database.db, stop.id, 'again')).toBeUndefined();
    expect(await acknowledgeCommand(database.db, resume.id, 'stray')).toBeUndefined();
    // Each change is one event, with the vehicle; a repeated send is an event of its own.
    expect(await events()).toEqual([
      ['command.sent', stop.id, 'sent', 1],
      ['command.sent', stop.id, 'sent', 2],
      ['command.acknowledged', stop.id, 'acknowledged', 2],
    ]);
    const { rows } = await sql<{ data: any; device_id: number }>`SELECT data, device_id FROM events WHERE type = 'command.acknowledged'`.execute(database.db);
    expect(rows[0]).toMatchObject({ device_id: base.deviceId, data: { vehicle: { imei: expect.any(String) }, command: { type: 'engine_stop', response: 'DOUT1:1 Timeout:INFINITY', error: null } } });
    expect(await devicesWithOpenCommands(database.db, [base.deviceId, base.deviceId + 1000])).toEqual([base.deviceId]);
  });

  it('keeps why an open command waits until it is sent (again), and keeps a refusal\'s answer with the failure', async () => {
    await clear();
    const held = (await queueCommand(database.db, { ...base, type: 'engine_stop', idempotencyKey: null, holdReason: 'waiting for the vehicle to slow down' })).command;
    expect(held).toMatchObject({ status: 'queued', status_reason: 'waiting for the vehicle to slow down', max_attempts: 3 });
    expect(await holdCommand(database.db, held.id, null)).toMatchObject({ status_reason: null });
    expect(await holdCommand(database.db, held.id, 'waiting for the vehicle to slow down')).toMatchObject({ status_reason: 'waiting for the vehicle to slow down' });
    expect(await markCommandSent(database.db, held.id)).toMatchObject({ status: 'sent', status_reason: null });
    // A sent one may wait too, before it is sent again on a new connection; its next send clears the reason.
    expect(await holdCommand(database.db, held.id, 'waiting for a current fix from the vehicle')).toMatchObject({ status: 'sent', status_reason: 'waiting for a current fix from the vehicle' });
    expect(await markCommandSent(database.db, held.id)).toMatchObject({ status: 'sent', attempts: 2, status_reason: null });
    expect(await failCommand(database.db, held.id, 'the tracker refused it', 'Error: speed too high')).toMatchObject({
      status: 'failed', status_reason: 'the tracker refused it', response: 'Error: speed too high',
    });
    expect(await holdCommand(database.db, held.id, 'late')).toBeUndefined();
    expect(await events()).toEqual([['command.sent', held.id, 'sent', 1], ['command.sent', held.id, 'sent', 2], ['command.failed', held.id, 'failed', 2]]);
  });

  it('cancels only a queued command of the same account, and finished commands stay finished', async () => {
    await clear();
    const queued = (await queueCommand(database.db, { ...base, type: 'siren_on', idempotencyKey: null })).command;
    expect(await cancelQueuedCommand(database.db, base.accountId + 1000, queued.id)).toBeUndefined();
    expect(await cancelQueuedCommand(database.db, base.accountId, queued.id)).toMatchObject({ status: 'cancelled' });
    expect(await markCommandSent(database.db, queued.id)).toBeUndefined();
    expect(await failCommand(database.db, queued.id, 'late')).toBeUndefined();

    const sent = (await queueCommand(database.db, { ...base, type: 'siren_off', idempotencyKey: null })).command;
    await markCommandSent(database.db, sent.id);
    expect(await cancelQueuedCommand(database.db, base.accountId, sent.id)).toBeUndefined();
    expect(await failCommand(database.db, sent.id, 'no answer after 3 attempts')).toMatchObject({ status: 'failed', status_reason: 'no answer after 3 attempts' });
    expect(await acknowledgeCommand(database.db, sent.id, 'too late')).toBeUndefined();
    expect(await events()).toEqual([
      ['command.cancelled', queued.id, 'cancelled', 0],
      ['command.sent', sent.id, 'sent', 1],
      ['command.failed', sent.id, 'failed', 1],
    ]);
  });

  it('expires open commands past their time to live, and never gives them to the device', async () => {
    await clear();
    const past = new Date(Date.now() - 1000);
    const old = (await queueCommand(database.db, { ...base, type: 'engine_stop', idempotencyKey: null, expiresAt: past })).command;
    const live = (await queueCommand(database.db, { ...base, type: 'engine_resume', idempotencyKey: null })).command;
    expect((await nextCommandFor(database.db, base.deviceId))?.id).toBe(live.id);
    expect(await markCommandSent(database.db, old.id)).toBeUndefined();
    const expired = await expireCommands(database.db);
    expect(expired.map((c) => [c.id, c.status])).toEqual([[old.id, 'expired']]);
    expect(await expireCommands(database.db)).toEqual([]);
    expect(await events()).toEqual([['command.expired', old.id, 'expired', 0]]);
  });
});
