import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import type { Device } from '../db/schema.ts';
import { commandSerial } from '../domain/commands/command-catalog.ts';
import { commandEncoder } from '../ingest/protocol-catalog.ts';
import { gt06Dialect, teltonikaDialect } from '../simulators/tracker-dialect.ts';
import { commandTracker, type CommandTracker } from '../simulators/command-tracker.ts';
import { eventually } from './support/eventually.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { freePort, freshDatabase, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { servedApi } from './support/served-api.ts';

/**
 * Commands end to end: `fleet serve` (on the embedded default, or PostgreSQL + Redis when the suite
 * runs there), trackers on real sockets, and the API over HTTP. The periodic sweep is switched off
 * (an hour), so every delivery below is the push path's: the login, the queued notification, the
 * answer that frees the line, the fix that releases a held stop.
 */

let fresh: FreshDatabase;
let server: Serving;
let key: string;
let teltonikaPort: number;
let gt06Port: number;
const devices: Record<string, Device> = {};
const open: CommandTracker[] = [];

const api = servedApi(() => server.url, () => key);
const send = async (body: Record<string, unknown>) => {
  const res = await api('/commands', { method: 'POST', body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.data as { id: string; status: string; reason: string | null };
};
const command = async (id: string) => (await api(`/commands/${id}`)).body.data;
const settled = (id: string, status: string) => eventually(() => command(id), (c) => expect(c.status).toBe(status));
const tracker = async (name: string, dialect = teltonikaDialect) => {
  const t = await commandTracker(dialect === gt06Dialect ? gt06Port : teltonikaPort, devices[name]!.imei, dialect);
  open.push(t);
  return t;
};

beforeAll(async () => {
  fresh = await freshDatabase();
  const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.dataDir ?? '', embedded: 'own' });
  const make = fixtures(setup.db);
  const { account, user } = await make.tenant();
  key = (await make.key(user.id, { permissions: ['*', 'commands:write', 'commands:custom'] })).key;
  for (const [name, protocol] of [
    ['stop', 'teltonika'], ['gt06', 'gt06'], ['offline', 'teltonika'], ['dropped', 'teltonika'], ['silent', 'teltonika'],
    ['expiring', 'teltonika'], ['fast', 'teltonika'], ['refusing', 'teltonika'],
  ] as const) {
    devices[name] = await make.device(account.id, { userIds: [user.id], protocol, name });
  }
  await setup.close();
  teltonikaPort = await freePort();
  gt06Port = await freePort();
  server = await serve({
    ...fresh.env, PORT: '0', DEMO_SEED: 'false', TELTONIKA_PORT: String(teltonikaPort), GT06_PORT: String(gt06Port),
    COMMAND_SWEEP_S: '3600', COMMAND_ANSWER_TIMEOUT_S: '2', COMMAND_EXPIRY_SWEEP_S: '1',
  });
}, 180_000);

afterAll(async () => {
  for (const t of open) t.close();
  server?.process.kill('SIGTERM');
  await server?.exited;
  await fresh?.destroy();
});

describe('a command to a connected tracker', () => {
  it('reaches a Teltonika tracker as the Codec 12 frame at once, and its answer acknowledges it', async () => {
    const t = await tracker('stop');
    await t.report({ speedKmh: 0 });
    const queued = await send({ deviceId: devices.stop!.imei, type: 'engine_stop' });
    const posted = Date.now();
    expect(queued.status).toBe('queued');
    const received = await t.nextCommand();
    expect(received?.text).toBe('setdigout 1');
    console.log(`teltonika engine_stop: POST answered → frame at the tracker in ${received!.at - posted} ms`);
    // The bytes on the wire are the encoder's, exactly.
    expect(received!.raw).toEqual(Buffer.from(commandEncoder('teltonika')!.encode({ type: 'engine_stop', params: {} }, { deviceId: devices.stop!.imei, serial: commandSerial(queued.id) })));
    expect(await command(queued.id)).toMatchObject({ status: 'sent', attempts: 1, sentAt: expect.any(String) });

    t.answer(received!);
    const done = await settled(queued.id, 'acknowledged');
    expect(done).toMatchObject({ response: 'DOUT1:1 Timeout:INFINITY DOUT2:IGNORED', acknowledgedAt: expect.any(String), error: null });
    const events = await api(`/events?types=command.*&deviceIds=${devices.stop!.imei}&order=asc`);
    expect(events.body.data.map((e: any) => [e.type, e.data.command.status])).toEqual([['command.sent', 'sent'], ['command.acknowledged', 'acknowledged']]);
  });

  it('reaches a GT06 tracker as Relay,1# with the command\'s server flag, which its 0x15 answer echoes', async () => {
    const t = await tracker('gt06', gt06Dialect);
    await t.report({ speedKmh: 0 });
    const queued = await send({ deviceId: devices.gt06!.imei, type: 'engine_stop' });
    const received = await t.nextCommand();
    expect(received).toMatchObject({ text: 'Relay,1#', serverFlag: Number(queued.id) });
    expect(received!.raw).toEqual(Buffer.from(commandEncoder('gt06')!.encode({ type: 'engine_stop', params: {} }, { deviceId: devices.gt06!.imei, serial: commandSerial(queued.id) })));
    // An answer echoing another command's flag is not this command's.
    t.answer({ ...received!, serverFlag: received!.serverFlag! + 1000 }, 'Cut off the fuel supply: Success!');
    await new Promise((r) => setTimeout(r, 300));
    expect((await command(queued.id)).status).toBe('sent');
    t.answer(received!);
    expect(await settled(queued.id, 'acknowledged')).toMatchObject({ response: 'Cut off the fuel supply: Success!' });
  });

  it('fails a command the tracker refuses, keeping its answer', async () => {
    const t = await tracker('refusing');
    const queued = await send({ deviceId: devices.refusing!.imei, type: 'custom', text: 'getinfo' });
    const received = await t.nextCommand();
    t.answer(received!);
    expect(await settled(queued.id, 'failed')).toMatchObject({ response: 'Unknown command', error: 'the tracker refused the command (see response)' });
  });
});

describe('a tracker that is not connected', () => {
  it('gets its queued commands right after its login, in creation order, each after the previous is answered', async () => {
    const first = await send({ deviceId: devices.offline!.imei, type: 'siren_on' });
    const second = await send({ deviceId: devices.offline!.imei, type: 'siren_off' });
    expect((await command(first.id)).status).toBe('queued');
    const t = await tracker('offline');
    const one = await t.nextCommand();
    expect(one?.text).toBe('setdigout ?1');
    // One at a time: the second waits for the first's answer.
    expect(await t.nextCommand(500)).toBeUndefined();
    expect((await command(second.id)).status).toBe('queued');
    t.answer(one!);
    const two = await t.nextCommand();
    expect(two?.text).toBe('setdigout ?0');
    t.answer(two!);
    await settled(first.id, 'acknowledged');
    await settled(second.id, 'acknowledged');
  });

  it('is sent an unanswered command again on its next connection, until it answers', async () => {
    const queued = await send({ deviceId: devices.dropped!.imei, type: 'engine_resume' });
    const before = await tracker('dropped');
    const first = await before.nextCommand();
    expect(first?.text).toBe('setdigout 0');
    before.close();
    const left = await settled(queued.id, 'sent');
    expect(left.attempts).toBe(1);
    const after = await tracker('dropped');
    const again = await after.nextCommand();
    expect(again?.text).toBe('setdigout 0');
    expect(await command(queued.id)).toMatchObject({ status: 'sent', attempts: 2 });
    after.answer(again!);
    await settled(queued.id, 'acknowledged');
  });

  it('lets a command expire when its time to live passes first, and never sends it', async () => {
    const queued = await send({ deviceId: devices.expiring!.imei, type: 'siren_on', ttlSeconds: 1 });
    const expired = await settled(queued.id, 'expired');
    expect(expired.finishedAt).toEqual(expect.any(String));
    const t = await tracker('expiring');
    expect(await t.nextCommand(1_000)).toBeUndefined();
    const events = await api(`/events?types=command.expired&deviceIds=${devices.expiring!.imei}`);
    expect(events.body.data.map((e: any) => e.data.command.id)).toEqual([queued.id]);
  });
});

describe('delivery rules', () => {
  it('sends an unanswered command again after the answer timeout, and fails it after its last attempt', async () => {
    const t = await tracker('silent');
    const queued = await send({ deviceId: devices.silent!.imei, type: 'siren_on', maxAttempts: 2 });
    expect((await t.nextCommand())?.text).toBe('setdigout ?1');
    expect((await t.nextCommand(5_000))?.text).toBe('setdigout ?1');
    const failed = await settled(queued.id, 'failed');
    expect(failed).toMatchObject({ attempts: 2, error: 'no answer within 2 s, 2 of 2 attempts' });
  });

  it('holds an engine stop while the vehicle is fast and sends it with the first slow fix', async () => {
    const t = await tracker('fast');
    await t.report({ speedKmh: 62 });
    const queued = await send({ deviceId: devices.fast!.imei, type: 'engine_stop' });
    expect(queued).toMatchObject({ status: 'queued', reason: 'waiting for the vehicle to slow down' });
    await t.report({ speedKmh: 45 });
    expect(await t.nextCommand(500)).toBeUndefined();
    expect((await command(queued.id)).reason).toBe('waiting for the vehicle to slow down');
    await t.report({ speedKmh: 12 });
    const received = await t.nextCommand();
    expect(received?.text).toBe('setdigout 1');
    expect(await command(queued.id)).toMatchObject({ status: 'sent', reason: null });
    t.answer(received!);
    await settled(queued.id, 'acknowledged');
  });
});
