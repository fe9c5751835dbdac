import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledgeOldestSent, cancelQueuedCommand, expireCommands, failCommand, markCommandSent, nextCommandFor, queueCommand, type NewCommand } from '../db/commands.ts';
import { fixtures } from './support/fixtures.ts';
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

const clear = () => sql`DELETE FROM commands`.execute(database.db);

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
    const connectedAt = new Date(Date.now() - 1000);
    expect((await nextCommandFor(database.db, base.deviceId, connectedAt))?.id).toBe(stop.id);
    expect(await markCommandSent(database.db, stop.id)).toMatchObject({ status: 'sent', attempts: 1 });
    // Sent on this connection: awaited, nothing else meanwhile.
    expect(await nextCommandFor(database.db, base.deviceId, connectedAt)).toBeUndefined();
    // On a newer connection the unanswered one is given again.
    const reconnected = new Date(Date.now() + 1000);
    expect((await nextCommandFor(database.db, base.deviceId, reconnected))?.id).toBe(stop.id);
    expect(await markCommandSent(database.db, stop.id)).toMatchObject({ attempts: 2 });

    const acked = await acknowledgeOldestSent(database.db, base.deviceId, 'DOUT1:1 Timeout:INFINITY');
    expect(acked).toMatchObject({ id: stop.id, status: 'acknowledged', response: 'DOUT1:1 Timeout:INFINITY' });
    expect(acked?.finished_at).toBeInstanceOf(Date);
    expect((await nextCommandFor(database.db, base.deviceId, connectedAt))?.id).toBe(resume.id);
    // An answer with nothing sent acknowledges nothing.
    expect(await acknowledgeOldestSent(database.db, base.deviceId, 'stray')).toBeUndefined();
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
    expect(await acknowledgeOldestSent(database.db, base.deviceId, 'too late')).toBeUndefined();
  });

  it('expires open commands past their time to live, and never gives them to the device', async () => {
    await clear();
    const past = new Date(Date.now() - 1000);
    const old = (await queueCommand(database.db, { ...base, type: 'engine_stop', idempotencyKey: null, expiresAt: past })).command;
    const live = (await queueCommand(database.db, { ...base, type: 'engine_resume', idempotencyKey: null })).command;
    expect((await nextCommandFor(database.db, base.deviceId, new Date()))?.id).toBe(live.id);
    expect(await markCommandSent(database.db, old.id)).toBeUndefined();
    const expired = await expireCommands(database.db);
    expect(expired.map((c) => [c.id, c.status])).toEqual([[old.id, 'expired']]);
    expect(await expireCommands(database.db)).toEqual([]);
  });
});
