import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import type { Device } from '../db/schema.ts';
import { commandTracker, type CommandTracker } from '../simulators/command-tracker.ts';
import { gt06Dialect, teltonikaDialect, type TrackerDialect } from '../simulators/tracker-dialect.ts';
import { eventually } from './support/eventually.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { freePort, freshDatabase, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { servedApi } from './support/served-api.ts';

/**
 * The engine cut-off rule over real sockets, as a truck would meet it: `fleet serve`, GT06 and
 * Teltonika trackers that log in, report the fixes the test chooses and collect whatever the server
 * writes. A stop is judged only on a current fix (at most COMMAND_SAFE_STOP_MAX_FIX_AGE_S old)
 * received on the connection it would go out on, at every send. The sweep is switched off (an hour):
 * every delivery here is pushed by a login, a queued notification or a stored fix.
 */

const NOTHING_MS = 1_000;
const CURRENT_FIX = 'waiting for a current fix from the vehicle';
const SLOW_DOWN = 'waiting for the vehicle to slow down';

let fresh: FreshDatabase;
let server: Serving;
let key: string;
const ports: Record<string, number> = {};
const devices: Record<string, Device> = {};
const open: CommandTracker[] = [];

const api = servedApi(() => server.url, () => key);
const command = async (id: string) => (await api(`/commands/${id}`)).body.data;
const stop = async (imei: string) => {
  const res = await api('/commands', { method: 'POST', body: { deviceId: imei, type: 'engine_stop' } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.data as { id: string; status: string; reason: string | null };
};
const connect = async (name: string, dialect: TrackerDialect) => {
  const t = await commandTracker(ports[dialect.protocol]!, devices[name]!.imei, dialect);
  open.push(t);
  return t;
};
/** Waits until the server has seen the device's connection end. */
const offline = (name: string) =>
  eventually(() => api(`/events?types=device.offline&deviceIds=${devices[name]!.imei}`), (r) => expect(r.body.data.length).toBeGreaterThan(0));
const stopText = (dialect: TrackerDialect) => (dialect === gt06Dialect ? 'Relay,1#' : 'setdigout 1');
/** The stop reaches the tracker as its `attempts`-th send, and the tracker's answer acknowledges it. */
async function stopArrives(t: CommandTracker, dialect: TrackerDialect, id: string, attempts: number) {
  const received = await t.nextCommand();
  expect(received?.text).toBe(stopText(dialect));
  expect(await command(id)).toMatchObject({ status: 'sent', attempts, reason: null });
  t.answer(received!);
  await eventually(() => command(id), (c) => expect(c.status).toBe('acknowledged'));
}
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

beforeAll(async () => {
  fresh = await freshDatabase();
  const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.dataDir ?? '', embedded: 'own' });
  const make = fixtures(setup.db);
  const { account, user } = await make.tenant();
  key = (await make.key(user.id, { permissions: ['*', 'commands:write'] })).key;
  for (const dialect of [teltonikaDialect, gt06Dialect]) {
    for (const role of ['parked', 'resent']) {
      const name = `${dialect.protocol}-${role}`;
      devices[name] = await make.device(account.id, { userIds: [user.id], protocol: dialect.protocol, name });
    }
  }
  await setup.close();
  ports.teltonika = await freePort();
  ports.gt06 = await freePort();
  server = await serve({
    ...fresh.env, PORT: '0', DEMO_SEED: 'false', TELTONIKA_PORT: String(ports.teltonika), GT06_PORT: String(ports.gt06),
    COMMAND_SWEEP_S: '3600', COMMAND_ANSWER_TIMEOUT_S: '3600',
  });
}, 180_000);

afterAll(async () => {
  for (const t of open) t.close();
  server?.process.kill('SIGTERM');
  await server?.exited;
  await fresh?.destroy();
});

describe.each([teltonikaDialect, gt06Dialect])('an engine stop to a $protocol tracker', (dialect) => {
  it('queued while the truck was parked and offline is not sent when it reconnects moving, only on a current slow fix', async () => {
    const name = `${dialect.protocol}-parked`;
    const parked = await connect(name, dialect);
    await parked.report({ speedKmh: 0 });
    parked.close();
    await offline(name);

    const queued = await stop(devices[name]!.imei);
    expect(queued.status).toBe('queued');

    const moving = await connect(name, dialect);
    // Nothing with the login answer: the newest stored fix (0 km/h) is from before this connection.
    expect(await moving.nextCommand(NOTHING_MS)).toBeUndefined();
    expect(await command(queued.id)).toMatchObject({ status: 'queued', reason: CURRENT_FIX });
    // A slow fix from minutes ago (a tracker unloading its buffer) says nothing of the speed now.
    await moving.report({ speedKmh: 0, time: minutesAgo(5) });
    expect(await moving.nextCommand(NOTHING_MS)).toBeUndefined();
    expect(await command(queued.id)).toMatchObject({ status: 'queued', reason: CURRENT_FIX });
    await moving.report({ speedKmh: 90 });
    expect(await moving.nextCommand(NOTHING_MS)).toBeUndefined();
    expect(await command(queued.id)).toMatchObject({ status: 'queued', reason: SLOW_DOWN });

    await moving.report({ speedKmh: 8 });
    await stopArrives(moving, dialect, queued.id, 1);
  });

  it('sent but unanswered is judged again before it is sent on the next connection', async () => {
    const name = `${dialect.protocol}-resent`;
    const slow = await connect(name, dialect);
    await slow.report({ speedKmh: 3 });
    const queued = await stop(devices[name]!.imei);
    expect((await slow.nextCommand())?.text).toBe(stopText(dialect));
    slow.close();
    await offline(name);
    expect(await command(queued.id)).toMatchObject({ status: 'sent', attempts: 1 });

    const fast = await connect(name, dialect);
    expect(await fast.nextCommand(NOTHING_MS)).toBeUndefined();
    expect(await command(queued.id)).toMatchObject({ status: 'sent', attempts: 1, reason: CURRENT_FIX });
    await fast.report({ speedKmh: 95 });
    expect(await fast.nextCommand(NOTHING_MS)).toBeUndefined();
    expect(await command(queued.id)).toMatchObject({ status: 'sent', attempts: 1, reason: SLOW_DOWN });

    await fast.report({ speedKmh: 0 });
    await stopArrives(fast, dialect, queued.id, 2);
  });
});
