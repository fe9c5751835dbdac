import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProxyProtocolOptions } from '../ingest/proxied-connection.ts';
import type { ConnectionLimits } from '../ingest/tracker-connection.ts';
import { createLogger } from '../runtime/logger.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { teltonikaCodec8, teltonikaLogin, type SimulatedFix } from '../simulators/teltonika-packets.ts';
import { eventually } from './support/eventually.ts';
import { freePort, freshDatabase, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { startTestIngest, type TestIngest } from './support/ingest-server.ts';
import { rawTracker, type RawTracker } from './support/raw-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

/**
 * Tracker ports behind a load balancer that speaks the PROXY protocol (TRACKER_PROXY_PROTOCOL), over
 * real sockets: the address the header names is the tracker's everywhere ingest uses one, the bytes
 * after the header reach the decoder, and a connection without a header is closed.
 */

let database: TestDatabase;
let accountId: number;
const running: TestIngest[] = [];
let logLines: Array<Record<string, unknown>> = [];
const log = createLogger('info', (line) => void logLines.push(JSON.parse(line) as Record<string, unknown>));

beforeAll(async () => {
  database = await openTestDatabase();
  accountId = (await fixtures(database.db).account()).id;
});
afterEach(async () => {
  for (const ingest of running.splice(0)) await ingest.close();
  logLines = [];
});
afterAll(async () => {
  await database?.destroy();
});

async function ingest(proxyProtocol: ProxyProtocolOptions | undefined, limits: Partial<ConnectionLimits> = {}): Promise<TestIngest> {
  const started = await startTestIngest(database, { log, proxyProtocol, limits: { idleTimeoutMs: 30_000, maxBufferedBytes: 1024 * 1024, ...limits } });
  running.push(started);
  return started;
}

const SIGNATURE = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');

/** A PROXY v2 header (command PROXY, TCP over IPv4) naming `source:port` as the client. */
function proxyV2(source: string, port: number): Buffer {
  const header = Buffer.alloc(28);
  SIGNATURE.copy(header);
  header.set([0x21, 0x11, 0x00, 12], 12);
  header.set(source.split('.').map(Number), 16);
  header.set([127, 0, 0, 1], 20);
  header.writeUInt16BE(port, 24);
  header.writeUInt16BE(5027, 26);
  return header;
}

/** A PROXY v2 LOCAL header, as a health check sends it: no client named. */
const PROXY_V2_LOCAL = Buffer.concat([SIGNATURE, Buffer.from([0x20, 0x00, 0x00, 0x00])]);

const fix = (time: string, latitude: number): SimulatedFix => ({
  time: new Date(time), latitude, longitude: -99.13, speedKmh: 30, heading: 90, satellites: 8, ignition: true,
});

async function storedFixes(deviceId: number): Promise<number> {
  return (await sql<{ n: number }>`SELECT count(*)::int AS n FROM positions WHERE device_id = ${deviceId}`.execute(database.db)).rows[0]!.n;
}

/** The device's open connection as the presence log keeps it. */
async function connectionOf(deviceId: number): Promise<string | null | undefined> {
  const row = await database.db.selectFrom('device_connections').select('remote_address').where('device_id', '=', deviceId).executeTakeFirst();
  return row?.remote_address;
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Logs in, sends one fix and expects both answered: the tracker was served. */
async function loginAndFix(t: RawTracker, imei: string, at: string, sendLogin = true): Promise<void> {
  if (sendLogin) t.send(teltonikaLogin(imei));
  expect((await t.read(1)).toString('hex')).toBe('01');
  t.send(teltonikaCodec8([fix(at, 19.4)]));
  expect((await t.read(4)).toString('hex')).toBe('00000001');
}

/** Sends a length no Teltonika login has, so the server closes the connection as unreadable and logs why. */
async function unreadableStream(t: RawTracker): Promise<void> {
  t.send(Buffer.from([0x7f, 0x7f]));
  expect(await t.closedByServer()).toBe(true);
}

/** The one line logged when the server closed the device's connection. */
function closedLine(imei: string): Record<string, unknown> | undefined {
  const lines = logLines.filter((l) => l.msg === 'tracker connection closed' && l.imei === imei);
  expect(lines).toHaveLength(1);
  return lines[0];
}

describe('TRACKER_PROXY_PROTOCOL=true', () => {
  it('serves the tracker a v2 header names, with its login and fix in the same write: stored, acknowledged, its address recorded', async () => {
    const server = await ingest({});
    const device = await fixtures(database.db).device(accountId);
    const t = await rawTracker(server.port);
    t.send(Buffer.concat([proxyV2('203.0.113.7', 40000), teltonikaLogin(device.imei), teltonikaCodec8([fix('2024-06-01T10:00:00Z', 19.4)])]));
    expect((await t.read(1)).toString('hex')).toBe('01');
    expect((await t.read(4)).toString('hex')).toBe('00000001');
    expect(await storedFixes(device.id)).toBe(1);
    await eventually(() => connectionOf(device.id), (address) => expect(address).toBe('203.0.113.7'));
    const online = () => database.db.selectFrom('events').select('data').where('device_id', '=', device.id).where('type', '=', 'device.online').execute();
    await eventually(online, (rows) => expect(rows.map((r) => r.data)).toEqual([expect.objectContaining({ remoteAddress: '203.0.113.7' })]));

    await unreadableStream(t);
    expect(closedLine(device.imei)).toMatchObject({ remote: '203.0.113.7:40000', via: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
  });

  it('waits for a header split over several writes, and a login split across its end', async () => {
    const server = await ingest({});
    const device = await fixtures(database.db).device(accountId);
    const t = await rawTracker(server.port);
    const bytes = Buffer.concat([proxyV2('198.51.100.20', 41000), teltonikaLogin(device.imei)]);
    for (const [from, to] of [[0, 1], [1, 13], [13, 16], [16, 27], [27, 31], [31, bytes.length]] as const) {
      t.send(bytes.subarray(from, to));
      await settle(30);
    }
    await loginAndFix(t, device.imei, '2024-06-01T11:00:00Z', false);
    await eventually(() => connectionOf(device.id), (address) => expect(address).toBe('198.51.100.20'));
    t.end();
  });

  it('takes a v1 text header too', async () => {
    const server = await ingest({});
    const device = await fixtures(database.db).device(accountId);
    const t = await rawTracker(server.port);
    t.send(`PROXY TCP6 2001:db8::7 2001:db8::1 40002 5027\r\n`);
    await loginAndFix(t, device.imei, '2024-06-01T12:00:00Z');
    await eventually(() => connectionOf(device.id), (address) => expect(address).toBe('2001:db8::7'));
    t.end();
  });

  it('keeps the socket\'s own address for a LOCAL header (a health check)', async () => {
    const server = await ingest({});
    const device = await fixtures(database.db).device(accountId);
    const t = await rawTracker(server.port);
    t.send(PROXY_V2_LOCAL);
    await loginAndFix(t, device.imei, '2024-06-01T13:00:00Z');
    await eventually(() => connectionOf(device.id), (address) => expect(address).toBe('127.0.0.1'));
    t.end();
  });

  it('closes a connection that opens with tracker bytes instead of a header, unanswered, with one log line', async () => {
    const server = await ingest({});
    const device = await fixtures(database.db).device(accountId);
    const t = await rawTracker(server.port);
    t.send(teltonikaLogin(device.imei));
    expect(await t.closedByServer()).toBe(true);
    expect((await t.read(1, 100)).length).toBe(0);
    expect(await connectionOf(device.id)).toBeUndefined();
    const refused = logLines.filter((l) => l.msg === 'tracker connection closed: it did not open with a valid PROXY protocol header');
    expect(refused).toEqual([expect.objectContaining({ level: 'warn', protocol: 'teltonika', reason: 'no PROXY protocol signature', bytes: 17 })]);

    // Rate-limited: the same peer doing it again is not logged again.
    const again = await rawTracker(server.port);
    again.send(teltonikaLogin(device.imei));
    expect(await again.closedByServer()).toBe(true);
    expect(logLines.filter((l) => l.msg === refused[0]!.msg)).toHaveLength(1);
  });

  it('closes a connection that sends no whole header within the time limit', async () => {
    const server = await ingest({ headerTimeoutMs: 300 });
    const silent = await rawTracker(server.port);
    const partial = await rawTracker(server.port);
    partial.send(proxyV2('203.0.113.7', 40000).subarray(0, 20));
    expect(await silent.closedByServer(3_000)).toBe(true);
    expect(await partial.closedByServer(3_000)).toBe(true);
    expect(logLines.find((l) => l.reason === 'no whole header within 300 ms')).toBeDefined();
  });

  it('counts unidentified connections by the address the header names, not the proxy\'s', async () => {
    const server = await ingest({}, { maxUnidentifiedPerAddress: 1 });
    const first = await rawTracker(server.port);
    first.send(proxyV2('203.0.113.7', 40000));
    const sameAddress = await rawTracker(server.port);
    sameAddress.send(proxyV2('203.0.113.7', 40001));
    const otherAddress = await rawTracker(server.port);
    otherAddress.send(proxyV2('203.0.113.8', 40000));
    expect(await sameAddress.closedByServer(3_000)).toBe(true);
    await settle(200);
    expect(first.closed).toBe(false);
    expect(otherAddress.closed).toBe(false);
    expect(server.counters.unidentifiedRefused).toBe(1);
    first.end();
    otherAddress.end();
  });

  it('closes at once a connection from a peer that is not a trusted proxy (TRACKER_PROXY_FROM)', async () => {
    const server = await ingest({ trusts: (address) => address === '192.0.2.10' });
    const device = await fixtures(database.db).device(accountId);
    const t = await rawTracker(server.port);
    t.send(Buffer.concat([proxyV2('203.0.113.7', 40000), teltonikaLogin(device.imei)]));
    expect(await t.closedByServer()).toBe(true);
    expect((await t.read(1, 100)).length).toBe(0);
    expect(logLines.find((l) => l.reason === 'the peer is not a trusted proxy (TRACKER_PROXY_FROM)')).toBeDefined();
  });
});

describe('TRACKER_PROXY_PROTOCOL unset', () => {
  it('serves trackers directly with their socket address, and a PROXY header is unreadable to the decoder', async () => {
    const server = await ingest(undefined);
    const device = await fixtures(database.db).device(accountId);
    const direct = await rawTracker(server.port);
    await loginAndFix(direct, device.imei, '2024-06-01T14:00:00Z');
    await eventually(() => connectionOf(device.id), (address) => expect(address).toBe('127.0.0.1'));
    direct.end();

    const proxied = await rawTracker(server.port);
    proxied.send(Buffer.concat([proxyV2('203.0.113.7', 40000), teltonikaLogin(device.imei)]));
    expect(await proxied.closedByServer()).toBe(true);
    expect((await proxied.read(1, 100)).length).toBe(0);
  });
});

describe('fleet serve with TRACKER_PROXY_PROTOCOL=true and TRACKER_PROXY_FROM', () => {
  let fresh: FreshDatabase | undefined;
  let server: Serving | undefined;
  let port: number;

  beforeAll(async () => {
    fresh = await freshDatabase();
    port = await freePort();
    // The proxy is 127.0.0.2: a peer on 127.0.0.1 is not it.
    server = await serve({ ...fresh.env, PORT: '0', DEMO_SEED: 'false', TELTONIKA_PORT: String(port), TRACKER_PROXY_PROTOCOL: 'true', TRACKER_PROXY_FROM: '127.0.0.2' });
  }, 180_000);
  afterAll(async () => {
    server?.process.kill('SIGTERM');
    await server?.exited;
    await fresh?.destroy();
  });

  it('serves a connection from the named proxy that opens with a header, and closes one from any other peer', async () => {
    const login = Buffer.concat([proxyV2('203.0.113.7', 40000), teltonikaLogin('359632104567890')]);
    const fromProxy = await rawTracker(port, { localAddress: '127.0.0.2' });
    fromProxy.send(login);
    // Served: an IMEI nobody registered is answered 0x00.
    expect((await fromProxy.read(1)).toString('hex')).toBe('00');
    const withoutHeader = await rawTracker(port, { localAddress: '127.0.0.2' });
    withoutHeader.send(teltonikaLogin('359632104567890'));
    expect(await withoutHeader.closedByServer()).toBe(true);
    expect((await withoutHeader.read(1, 100)).length).toBe(0);
    const stranger = await rawTracker(port);
    stranger.send(login);
    expect(await stranger.closedByServer()).toBe(true);
    expect((await stranger.read(1, 100)).length).toBe(0);
    fromProxy.end();
  });
});

const haproxyInstalled = spawnSync('haproxy', ['-v']).status === 0;

describe.skipIf(!haproxyInstalled)(haproxyInstalled ? 'behind a real HAProxy' : 'behind a real HAProxy (skipped: haproxy is not installed; apt-get install haproxy)', () => {
  let dir: string;
  let haproxy: ChildProcess | undefined;

  afterEach(async () => {
    if (haproxy && haproxy.exitCode === null) {
      const exited = new Promise((resolve) => haproxy!.once('exit', resolve));
      haproxy.kill('SIGTERM');
      await exited;
    }
    haproxy = undefined;
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** HAProxy in TCP mode on a free port, in front of `ingestPort` with `sendProxy` on its server line. */
  async function startHaproxy(ingestPort: number, sendProxy: 'send-proxy-v2' | 'send-proxy'): Promise<number> {
    const front = await freePort();
    dir = await mkdtemp(join(tmpdir(), 'fleet-haproxy-'));
    const config = join(dir, 'haproxy.cfg');
    await writeFile(config, [
      'global',
      '  maxconn 100',
      'defaults',
      '  mode tcp',
      '  timeout connect 5s',
      '  timeout client 30s',
      '  timeout server 30s',
      'frontend trackers',
      `  bind 127.0.0.1:${front}`,
      '  default_backend ingest',
      'backend ingest',
      // Its health checks send the header too (v2: the LOCAL command) every 100 ms.
      `  server ingest1 127.0.0.1:${ingestPort} ${sendProxy} check inter 100ms`,
      '',
    ].join('\n'));
    let output = '';
    haproxy = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    haproxy.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    haproxy.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (haproxy.exitCode !== null) throw new Error(`haproxy exited: ${output}`);
      const up = await new Promise<boolean>((resolve) => {
        const probe = connect(front, '127.0.0.1', () => {
          probe.destroy();
          resolve(true);
        });
        probe.on('error', () => resolve(false));
      });
      if (up) return front;
      if (Date.now() > deadline) throw new Error(`haproxy did not listen on ${front}: ${output}`);
      await settle(50);
    }
  }

  it.each(['send-proxy-v2', 'send-proxy'] as const)('%s: the tracker\'s address (127.0.0.2), not HAProxy\'s, is recorded; fixes stored and acknowledged', async (sendProxy) => {
    const server = await ingest({});
    const front = await startHaproxy(server.port, sendProxy);
    const device = await fixtures(database.db).device(accountId);
    const t = await rawTracker(front, { localAddress: '127.0.0.2' });
    await loginAndFix(t, device.imei, '2024-06-01T15:00:00Z');
    expect(await storedFixes(device.id)).toBe(1);
    await eventually(() => connectionOf(device.id), (address) => expect(address).toBe('127.0.0.2'));
    await unreadableStream(t);
    expect(closedLine(device.imei)).toMatchObject({
      remote: expect.stringMatching(/^127\.0\.0\.2:\d+$/), via: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
    });
    // The health checks were served and let go quietly: no line says a connection lacked its header.
    expect(logLines.filter((l) => l.level !== 'info')).toEqual([]);
  });
});
