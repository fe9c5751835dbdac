import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import type { Device } from '../db/schema.ts';
import { commandSerial, type CommandRequest } from '../domain/commands/command-catalog.ts';
import { commandEncoder } from '../ingest/protocol-catalog.ts';
import { crc16Kermit } from '../ingest/protocols/ruptela/ruptela-crc.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { eventually } from './support/eventually.ts';
import { freePort, freshDatabase, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { rawTracker, type RawTracker } from './support/raw-tracker.ts';
import { servedApi } from './support/served-api.ts';
import {
  gps103AlternativeClock, gps103Clock, ruptelaDevicePacket, ruptelaPacket, suntechClock, watchClock, watchFrame, wialonClock, wialonPacket,
} from './support/tracker-captures.ts';

/**
 * The five protocols added last (Coban GPS103, Wialon IPS, Suntech, Ruptela, Watch) end to end: one
 * `fleet serve` with all five ports, real captures on real sockets, and the API over HTTP. Per
 * protocol: the login and the exact reply the device waits for, a fix readable as the device's status
 * and in its history, an SOS where the protocol carries one, and a command that reaches the socket
 * as the folder's encoder writes it and is settled by the tracker's answer. The command sweep is off
 * (an hour), so every delivery is pushed by the queueing or by the fix that makes a stop safe.
 */

const PROTOCOLS = ['gps103', 'wialon', 'suntech', 'ruptela', 'watch'] as const;
type Protocol = (typeof PROTOCOLS)[number];
/** The test devices: one per protocol, and a Suntech ST4xx beside the ST300 (another layout, with its cell's signal and battery). */
const TRACKERS = { gps103: 'gps103', wialon: 'wialon', suntech: 'suntech', st4xx: 'suntech', ruptela: 'ruptela', watch: 'watch' } as const;
type Name = keyof typeof TRACKERS;
/** Suntech trackers are known by their 9-digit serial, not an IMEI. */
const SERIALS: Partial<Record<Name, string>> = { suntech: '907131077', st4xx: '007272376' };
const PORT_VARIABLE: Record<Protocol, string> = {
  gps103: 'GPS103_PORT', wialon: 'WIALON_PORT', suntech: 'SUNTECH_PORT', ruptela: 'RUPTELA_PORT', watch: 'WATCH_PORT',
};
/** How long "nothing arrives" is watched for, on a protocol that answers nothing. */
const SILENCE_MS = 1_000;

let fresh: FreshDatabase;
let server: Serving;
let key: string;
const ports = {} as Record<Protocol, number>;
const devices = {} as Record<Name, Device>;
const open: RawTracker[] = [];

const api = servedApi(() => server.url, () => key);
const connect = async (name: Name) => {
  const t = await rawTracker(ports[TRACKERS[name]]);
  open.push(t);
  return t;
};
/** Exactly `expected` comes back, and nothing before it. */
const replies = async (t: RawTracker, expected: string | Uint8Array) => {
  const bytes = typeof expected === 'string' ? Buffer.from(expected, 'latin1') : Buffer.from(expected);
  const got = await t.read(bytes.length);
  expect(got.toString('latin1')).toBe(bytes.toString('latin1'));
};
const silent = async (t: RawTracker) => expect((await t.read(1, SILENCE_MS)).toString('latin1')).toBe('');

const status = async (name: Name) => {
  const res = await api(`/devices/${devices[name]!.imei}/status`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
};
const history = async (name: Name) => {
  const res = await api(`/vehicles/${devices[name]!.imei}/positions`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Array<{ fixTime: string; lat: number; lng: number; speedKmh: number | null; heading: number | null; altitude: number | null; satellites: number | null; valid: boolean; attributes: Record<string, unknown> }>;
};
const fixAt = async (name: Name, at: Date) => {
  const fix = (await history(name)).find((p) => Date.parse(p.fixTime) === at.getTime());
  expect(fix, `no stored fix of ${name} at ${at.toISOString()}`).toBeDefined();
  return fix!;
};
/**
 * The status once the fix of `at` is stored (a protocol without an ACK gives no moment to read it
 * at); the fix and the latest state are written in one transaction.
 */
const statusAt = async (name: Name, at: Date) => {
  await eventually(() => history(name), (fixes) => expect(fixes.map((p) => Date.parse(p.fixTime))).toContain(at.getTime()));
  return status(name);
};
const panics = (name: Name) =>
  eventually(() => api(`/events?types=vehicle.panic&deviceIds=${devices[name]!.imei}`), (r) => expect(r.body.data.length).toBeGreaterThan(0)).then((r) => r.body.data);

const queue = async (name: Name, body: Omit<CommandRequest, 'params'> & { params?: Record<string, unknown> }) => {
  const res = await api('/commands', { method: 'POST', body: { deviceId: devices[name]!.imei, ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.data as { id: string; status: string };
};
/** The bytes the protocol's own encoder writes for the command. */
const encoded = (name: Name, id: string, request: CommandRequest) =>
  commandEncoder(TRACKERS[name])!.encode(request, { deviceId: devices[name]!.imei, serial: commandSerial(id) });
const command = async (id: string) => (await api(`/commands/${id}`)).body.data;
const settled = (id: string, state: string) => eventually(() => command(id), (c) => expect(c.status).toBe(state));

/** Whole seconds, `secondsAgo` before now: trackers stamp their fixes to the second. */
const now = (secondsAgo = 0) => new Date(Math.floor(Date.now() / 1000) * 1000 - secondsAgo * 1000);

beforeAll(async () => {
  fresh = await freshDatabase();
  const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.dataDir ?? '', embedded: 'own' });
  const make = fixtures(setup.db);
  const { account, user } = await make.tenant();
  key = (await make.key(user.id, { permissions: ['*', 'commands:write', 'commands:custom'] })).key;
  for (const [name, protocol] of Object.entries(TRACKERS) as Array<[Name, Protocol]>) {
    const imei = SERIALS[name];
    devices[name] = await make.device(account.id, { userIds: [user.id], protocol, name: `${name} tracker`, ...(imei ? { imei } : {}) });
  }
  await setup.close();
  for (const protocol of PROTOCOLS) ports[protocol] = await freePort();
  server = await serve({
    ...fresh.env, PORT: '0', DEMO_SEED: 'false', COMMAND_SWEEP_S: '3600',
    // The status is polled where a protocol gives no ACK to wait for: more reads than one key's default window allows.
    RATE_LIMIT_MAX: '10000', OVERVIEW_RATE_LIMIT_MAX: '10000',
    ...Object.fromEntries(PROTOCOLS.map((p) => [PORT_VARIABLE[p], String(ports[p])])),
  });
}, 180_000);

afterAll(async () => {
  for (const t of open) t.end();
  server?.process.kill('SIGTERM');
  await server?.exited;
  await fresh?.destroy();
});

describe('Coban GPS103', () => {
  const imei = () => devices.gps103!.imei;
  const login = async () => {
    const t = await connect('gps103');
    t.send(`##,imei:${imei()},A;`);
    await replies(t, 'LOAD');
    return t;
  };
  /** `imei:…,<type>,<local time>,,F,<UTC time>,A,<fix and the rest of the capture>;` */
  const report = (type: string, at: Date, fix: string) => {
    const clock = gps103Clock(at);
    return `imei:${imei()},${type},${clock.local},,F,${clock.utc},A,${fix};`;
  };

  it('answers the login LOAD and the heartbeat ON', async () => {
    const t = await login();
    t.send(`${imei()};`);
    await replies(t, 'ON');
    t.end();
  });

  it('stores a report with its speed in knots, course and ignition, readable as the device status', async () => {
    const t = await login();
    const at = now(120);
    // Capture: imei:359710049090138,tracker,160629022948,,F,182949.000,A,4043.8839,N,11328.8029,W,65.26,271.82,,1,0,31.37%,51442,;
    t.send(report('tracker', at, '4043.8839,N,11328.8029,W,65.26,271.82,,1,0,31.37%,51442,'));
    const s = await statusAt('gps103', at);
    expect(s).toMatchObject({ status: 'Moving', engineStatus: 'On', speedKmh: 121, heading: 272 });
    expect(s.latitude).toBeCloseTo(40.7313983, 6);
    expect(s.longitude).toBeCloseTo(-113.4800483, 6);
    const fix = await fixAt('gps103', at);
    expect(fix).toMatchObject({ valid: true, speedKmh: 120.9, heading: 271.8 });
    expect(fix.attributes).toMatchObject({ ignition: true, door: false, fuel1: 31.37 });
    // The first fix to report ignition, and it says on: the engine logs it.
    const ignition = await eventually(() => api(`/events?types=vehicle.ignition.*&deviceIds=${imei()}`), (r) => expect(r.body.data.length).toBeGreaterThan(0));
    expect(ignition.body.data.map((e: any) => [e.type, e.timestamp])).toEqual([['vehicle.ignition.on', at.toISOString()]]);
    await silent(t); // a report is not acknowledged
    t.end();
  });

  it('reads the signal (CSQ) of the `*`-ended alternative format into the device status', async () => {
    const t = await login();
    const at = now(90);
    const { time, date } = gps103AlternativeClock(at);
    // Capture: imei:861359038609986,Equipo 1,---,------,----,214734,241018,26,1,-33.42317,-70.61930,067,229,0674,1.00,08,0,1,---,*
    t.send(`imei:${imei()},Equipo 1,---,------,----,${time},${date},26,1,-33.42317,-70.61930,067,229,0674,1.00,08,0,1,---,*`);
    const s = await statusAt('gps103', at);
    expect(s).toMatchObject({ latitude: -33.42317, longitude: -70.6193, speedKmh: 67, heading: 229, satellites: 8, signalStrength: 26, engineStatus: 'Off' });
    expect((await fixAt('gps103', at)).attributes).toMatchObject({ rssi: 26, ignition: false, charge: true, hdop: 1 });
    t.end();
  });

  it('acknowledges the SOS button with E and logs vehicle.panic at the fix', async () => {
    const t = await login();
    const at = now(60);
    // Capture: imei:100000000000000,help me,1004171910,,F,010203.000,A,0102.0003,N,00102.0003,E,1.02,
    t.send(report('help me', at, '0102.0003,N,00102.0003,E,1.02,'));
    await replies(t, `**,imei:${imei()},E;`);
    const [panic] = await panics('gps103');
    expect(panic).toMatchObject({ type: 'vehicle.panic', timestamp: at.toISOString(), data: { alarm: 'sos' } });
    expect(panic.data.position.lat).toBeCloseTo(1.0333383, 6);
    t.end();
  });

  it('sends engine_stop as **,imei:<id>,J after a slow fix, and the jt report acknowledges it', async () => {
    const t = await login();
    // Capture: imei:359710045559474,tracker,151030080103,,F,000101.000,A,5443.3834,N,02512.9071,E,0.00,0;
    t.send(report('tracker', now(), '5443.3834,N,02512.9071,E,0.00,0'));
    const queued = await queue('gps103', { type: 'engine_stop' });
    await replies(t, encoded('gps103', queued.id, { type: 'engine_stop', params: {} }));
    expect(Buffer.from(encoded('gps103', queued.id, { type: 'engine_stop', params: {} })).toString()).toBe(`**,imei:${imei()},J`);
    await settled(queued.id, 'sent');
    // The commands test's capture: imei:868166054696190,jt,231226105556,,F,105556.000,A,3518.59664,N,04658.22381,E,0.00,13.26;
    t.send(report('jt', now(), '3518.59664,N,04658.22381,E,0.00,13.26'));
    expect(await settled(queued.id, 'acknowledged')).toMatchObject({ response: 'jt', error: null });
    t.end();
  });

  it('fails a custom command the tracker refuses with <letter>f, keeping its answer', async () => {
    const t = await login();
    // L arms the tracker; it refuses while the ignition is on, answering lf.
    const queued = await queue('gps103', { type: 'custom', text: 'L' });
    await replies(t, `**,imei:${imei()},L`);
    await settled(queued.id, 'sent');
    // The commands test's capture: imei:868166054696190,lf,231226095912,,F,095912.000,A,3518.59827,N,04700.04798,E,0.00,196.17;
    t.send(report('lf', now(), '3518.59827,N,04700.04798,E,0.00,196.17'));
    expect(await settled(queued.id, 'failed')).toMatchObject({ response: 'lf (refused)', error: 'the tracker refused the command (see response)' });
    t.end();
  });
});

describe('Wialon IPS', () => {
  const login = async () => {
    const t = await connect('wialon');
    t.send(wialonPacket('L', `2.0;${devices.wialon!.imei};NA`));
    await replies(t, '#AL#1\r\n');
    return t;
  };

  it('answers the 2.0 login #AL#1 and a ping #AP#', async () => {
    const t = await login();
    t.send('#P#\r\n');
    await replies(t, '#AP#\r\n');
    t.end();
  });

  it('stores an extended data packet, answers #AD#1 after the commit, and shows its GSM signal', async () => {
    const t = await login();
    const at = now(120);
    // Capture: #D#220323;114150;2234.80479;N;11354.87786;E;0;NA;59;11;NA;NA;NA;;NA;d_battr:1:94,d_csq:1:21,di_light:1:1;E7C9
    t.send(wialonPacket('D', `${wialonClock(at)};2234.80479;N;11354.87786;E;0;NA;59;11;NA;NA;NA;;NA;d_battr:1:94,d_csq:1:21,di_light:1:1`));
    await replies(t, '#AD#1\r\n');
    const s = await status('wialon');
    expect(s).toMatchObject({ speedKmh: 0, satellites: 11, signalStrength: 21, lastReportUtc: expect.any(String) });
    expect(s.latitude).toBeCloseTo(22.5800798, 6);
    expect(s.longitude).toBeCloseTo(113.914631, 6);
    const fix = await fixAt('wialon', at);
    expect(fix).toMatchObject({ valid: true, altitude: 59, satellites: 11 });
    expect(fix.attributes).toMatchObject({ d_battr: 94, d_csq: 21, di_light: 1 });
    t.end();
  });

  it('answers a black box with the count of records registered, #AB#2, and stores both', async () => {
    const t = await login();
    const [first, second] = [now(100), now(90)];
    // Capture (1.1, here with the 2.0 checksum a device computes over its UTF-8 bytes):
    // #B#080914;073235;5027.50625;N;03026.19321;E;0.700;0.000;NA;4;NA;NA;NA;;NA;Батарея:3:100 %|080914;073420;…;1.996;292.540;NA;4;…
    const record = (at: Date, fix: string) => `${wialonClock(at)};${fix};NA;4;NA;NA;NA;;NA;Батарея:3:100 %`;
    t.send(wialonPacket('B', [record(first, '5027.50625;N;03026.19321;E;0.700;0.000'), record(second, '5027.50845;N;03026.18854;E;1.996;292.540')].join('|'), '|'));
    await replies(t, '#AB#2\r\n');
    expect(await fixAt('wialon', first)).toMatchObject({ speedKmh: 0.7, attributes: { archive: true, 'батарея': '100 %' } });
    expect(await fixAt('wialon', second)).toMatchObject({ speedKmh: 2, heading: 292.5 });
    t.end();
  });

  it('sends a custom command as #M#<text>, and the device receipt #AM#1 acknowledges it', async () => {
    const t = await login();
    const queued = await queue('wialon', { type: 'custom', text: 'Return to the depot' });
    const bytes = encoded('wialon', queued.id, { type: 'custom', params: {}, text: 'Return to the depot' });
    expect(Buffer.from(bytes).toString()).toBe('#M#Return to the depot\r\n');
    await replies(t, bytes);
    await settled(queued.id, 'sent');
    t.send('#AM#1\r\n');
    expect(await settled(queued.id, 'acknowledged')).toMatchObject({ response: '#AM#1', error: null });
    t.end();
  });

  it('fails a message the device answers #AM#0, its receipt of a refusal', async () => {
    const t = await login();
    const queued = await queue('wialon', { type: 'custom', text: 'L1=1' });
    await replies(t, '#M#L1=1\r\n');
    await settled(queued.id, 'sent');
    t.send('#AM#0\r\n');
    expect(await settled(queued.id, 'failed')).toMatchObject({ response: '#AM#0 (refused)', error: 'the tracker refused the command (see response)' });
    t.end();
  });

  it('refuses engine_stop before storing anything: Wialon IPS carries text messages only', async () => {
    const res = await api('/commands', { method: 'POST', body: { deviceId: devices.wialon!.imei, type: 'engine_stop' } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/wialon protocol cannot express engine_stop/);
  });
});

describe('Suntech', () => {
  const id = () => devices.suntech!.imei;
  /** ST300 report: model 40, firmware 313, then the capture's fields after the clock. */
  const st300 = (type: string, at: Date, rest: string) => `ST300${type};${id()};40;313;${suntechClock(at)};${rest}\r`;

  it('is identified by its keep-alive and answers nothing over TCP', async () => {
    const t = await connect('suntech');
    t.send(`ST300ALV;${id()}\r`);
    await silent(t);
    expect(t.closed).toBe(false);
    // Identified: the device is online on this connection.
    await eventually(() => api(`/events?types=device.online&deviceIds=${id()}`), (r) => expect(r.body.data.length).toBeGreaterThan(0));
    t.end();
  });

  it('stores an ST300 status report with its power, odometer and ignition, with no reply', async () => {
    const t = await connect('suntech');
    const at = now(120);
    // Capture: ST300STT;007238270;40;313;20190220;12:05:04;c99e48;+04.644623;-074.076922;010.390;202.77;20;1;997100;14.10;100000;2;8384;003634;4.1;1
    t.send(st300('STT', at, 'c99e48;+04.644623;-074.076922;010.390;202.77;20;1;997100;14.10;100000;2;8384;003634;4.1;1'));
    const s = await statusAt('suntech', at);
    expect(s).toMatchObject({ latitude: 4.644623, longitude: -74.076922, speedKmh: 10, heading: 203, satellites: 20, powerVoltage: '14.10 V', engineStatus: 'On', odometerKm: 997.1 });
    const fix = await fixAt('suntech', at);
    expect(fix).toMatchObject({ valid: true, speedKmh: 10.4, heading: 202.8 });
    expect(fix.attributes).toMatchObject({ type: 'STT', ignition: true, power: 14.1 });
    await silent(t);
    t.end();
  });

  it('logs vehicle.panic for an emergency (EMG code 1), with no reply', async () => {
    const t = await connect('suntech');
    const at = now(60);
    // The decoder test's capture: ST300EMG;205174410;14;712;20110101;00:00:07;00000;+20.593923;-100.336716;000.000;000.00;0;0;0;16.57;000000;1;
    t.send(`ST300EMG;${id()};14;712;${suntechClock(at)};00000;+20.593923;-100.336716;000.000;000.00;0;0;0;16.57;000000;1;\r`);
    const [panic] = await panics('suntech');
    expect(panic).toMatchObject({ type: 'vehicle.panic', timestamp: at.toISOString(), data: { alarm: 'sos', position: { lat: 20.593923, lng: -100.336716 } } });
    await silent(t);
    t.end();
  });

  it('sends engine_stop as SA200CMD;<id>;02;Enable1 after a stopped fix, and the Res answer acknowledges it', async () => {
    const t = await connect('suntech');
    t.send(st300('STT', now(), 'c99e48;+04.644623;-074.076922;000.000;202.77;20;1;997100;14.10;100000;2;8384;003634;4.1;1'));
    const queued = await queue('suntech', { type: 'engine_stop' });
    const bytes = encoded('suntech', queued.id, { type: 'engine_stop', params: {} });
    expect(Buffer.from(bytes).toString()).toBe(`SA200CMD;${id()};02;Enable1\r`);
    await replies(t, bytes);
    await settled(queued.id, 'sent');
    t.send(`ST300CMD;Res;${id()};02;Enable1\r`);
    expect(await settled(queued.id, 'acknowledged')).toMatchObject({ response: '02;Enable1', error: null });
    t.end();
  });

  it('shows an ST4xx report\'s serving-cell signal (dBm to 0–31) and backup battery in the device status', async () => {
    const t = await connect('st4xx');
    const at = now(30);
    // Capture: ST410STT;007272376;408;01;21651;732;123;-65;1824;1;…(six more cells)…;3.7;1;0156;1;20180816;05:18:52;+04.722322;-074.052776;000.074;000.00;10;1
    const cells = '21651;732;123;-65;1824;1;21654;732;123;1824;0;0;22542;732;123;1824;0;0;21656;732;123;1824;0;0;21655;732;123;1824;0;0;22541;732;123;1824;0;0;0;0;0;0;0;0';
    t.send(`ST410STT;${devices.st4xx!.imei};408;01;${cells};3.7;1;0156;1;${suntechClock(at)};+04.722322;-074.052776;000.074;000.00;10;1\r`);
    const s = await statusAt('st4xx', at);
    expect(s).toMatchObject({ latitude: 4.722322, longitude: -74.052776, speedKmh: 0, satellites: 10, signalStrength: 24, backupVoltage: '3.70 V' });
    expect((await fixAt('st4xx', at)).attributes).toMatchObject({ rssi: -65, cid: 21651, mcc: 732, mnc: 123, lac: 1824, index: 156 });
    await silent(t);
    t.end();
  });
});

describe('Ruptela', () => {
  const imei = () => devices.ruptela!.imei;
  const RECORDS_ACK = '0002640113bc';
  /** A records packet (1) of one record: 5.6292216 N 0.067495 W, at rest, GSM 12, power 13.286 V, battery 4.097 V. */
  const RECORDS = '0050000310f5615f419c0100015613d8ed0000fff5b37a035af37801e700000900000d07071b0c020003001c01202cad000500064302a81d33e61e100116317cd3ffff174ad60241000077fa960000f232003c2e';
  const serverAnswer = (id: number, content: number[]) => {
    const body = Buffer.from([id, ...content]);
    return Buffer.concat([Buffer.from([0, body.length]), body, Buffer.from([crc16Kermit(body) >> 8, crc16Kermit(body) & 0xff])]);
  };

  it('acknowledges a heartbeat (16) with 116 and a result of 1', async () => {
    const t = await connect('ruptela');
    t.send(ruptelaDevicePacket(imei(), 16));
    await replies(t, serverAnswer(116, [1]));
    t.end();
  });

  it('stores a records packet, acknowledges it 0002640113bc after the commit, and shows signal, power and battery', async () => {
    const t = await connect('ruptela');
    const at = now(120);
    t.send(ruptelaPacket(RECORDS, imei(), at));
    expect((await t.read(6)).toString('hex')).toBe(RECORDS_ACK);
    const s = await status('ruptela');
    expect(s).toMatchObject({ speedKmh: 0, heading: 0, satellites: 9, signalStrength: 12, powerVoltage: '13.29 V', backupVoltage: '4.10 V', odometerKm: 30.7 });
    expect(Date.parse(s.lastReportUtc)).toBeGreaterThanOrEqual(at.getTime());
    expect(s.latitude).toBeCloseTo(5.6292216, 6);
    expect(s.longitude).toBeCloseTo(-0.067495, 6);
    const fix = await fixAt('ruptela', at);
    expect(fix).toMatchObject({ valid: true, altitude: 48.7, satellites: 9 });
    expect(fix.attributes).toMatchObject({ rssi: 12, event: 7, hdop: 1.3, deviceTemp: 44 });
    t.end();
  });

  it('sends engine_stop as set IO (117) of output 1 after a stopped fix, and packet 17 acknowledges it', async () => {
    const t = await connect('ruptela');
    t.send(ruptelaPacket(RECORDS, imei(), now()));
    expect((await t.read(6)).toString('hex')).toBe(RECORDS_ACK);
    const queued = await queue('ruptela', { type: 'engine_stop' });
    const bytes = encoded('ruptela', queued.id, { type: 'engine_stop', params: {} });
    expect(Buffer.from(bytes)).toEqual(serverAnswer(117, [0, 0, 0, 1, 0, 0, 0, 1]));
    await replies(t, bytes);
    await settled(queued.id, 'sent');
    t.send(ruptelaDevicePacket(imei(), 17, Uint8Array.of(1)));
    expect(await settled(queued.id, 'acknowledged')).toMatchObject({ response: '1', error: null });
    t.end();
  });
});

describe('Watch', () => {
  const id = () => devices.watch!.imei;
  const frame = (content: string) => watchFrame('3G', id(), content);
  const login = async () => {
    const t = await connect('watch');
    // Capture: [3G*9705141740*0009*LK,0,0,53]
    t.send(frame('LK,0,0,53'));
    await replies(t, `[3G*${id()}*0002*LK]`);
    return t;
  };

  it('answers the link LK with [3G*<id>*0002*LK]', async () => {
    const t = await login();
    t.end();
  });

  it('stores an LTE position with its signal, network and speed', async () => {
    const t = await login();
    const at = now(120);
    // Capture: [3G*2104326058*00E9*UD_LTE,300621,135101,A,32.162652,N,34.888748,E,30.84,265.158,65.621,18,100,83,0,0,00000000,1,1,425,01,…,1.7055488]
    t.send(frame(`UD_LTE,${watchClock(at)},A,32.162652,N,34.888748,E,30.84,265.158,65.621,18,100,83,0,0,00000000,1,1,425,01,10223,8012811,100,3,ES4104,22:74:1d:39:64:ff,-46,metropoline-wifi,a8:3f:a1:e0:66:ba,-89,Egged.co.il,00:0c:42:51:cf:cd,-81,1.7055488`));
    const s = await statusAt('watch', at);
    expect(s).toMatchObject({ latitude: 32.162652, longitude: 34.888748, speedKmh: 31, heading: 265, satellites: 18, signalStrength: 31, connectionType: '4G', status: 'Moving' });
    const fix = await fixAt('watch', at);
    expect(fix).toMatchObject({ valid: true, altitude: 65.6 });
    expect(fix.attributes).toMatchObject({ rssi: 100, batteryLevel: 83 });
    await silent(t); // positions are not answered
    t.end();
  });

  it('answers an AL frame with AL and logs vehicle.panic from the SOS bit of its status', async () => {
    const t = await login();
    const at = now(60);
    // Capture: [3G*8809008845*00C0*AL,271219,094744,V,00.000000,N, 0.0000000,E,0.00,0.0,0.0,0,100,81,0,0,00010000,7,0,460,0,…,0,0.0]
    t.send(frame(`AL,${watchClock(at)},V,00.000000,N, 0.0000000,E,0.00,0.0,0.0,0,100,81,0,0,00010000,7,0,460,0,9336,3981,141,9336,3912,141,9336,3982,140,9765,4233,134,9765,4071,134,9765,4321,134,9336,4353,132,0,0.0`));
    await replies(t, `[3G*${id()}*0002*AL]`);
    const [panic] = await panics('watch');
    expect(panic).toMatchObject({ type: 'vehicle.panic', timestamp: at.toISOString(), data: { alarm: 'sos' } });
    t.end();
  });

  it('sends a custom command in the watch\'s own frame, and the echo acknowledges it', async () => {
    const t = await login();
    const request: CommandRequest = { type: 'custom', params: { manufacturer: '3G' }, text: 'CR' };
    const queued = await queue('watch', request);
    const bytes = encoded('watch', queued.id, request);
    expect(Buffer.from(bytes).toString()).toBe(`[3G*${id()}*0002*CR]`);
    await replies(t, bytes);
    await settled(queued.id, 'sent');
    t.send(frame('CR'));
    expect(await settled(queued.id, 'acknowledged')).toMatchObject({ response: 'CR', error: null });
    t.end();
  });
});
