import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ingestMetrics } from '../ingest/ingest-metrics.ts';
import type { ConnectionLimits } from '../ingest/tracker-connection.ts';
import { teltonikaLogin } from '../simulators/teltonika-packets.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { startTestIngest, type TestIngest } from './support/ingest-server.ts';
import { rawTracker } from './support/raw-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

/**
 * Tracker ports handed to strangers, over real sockets: a connection that never says who it is goes
 * after the login timeout, one address cannot hold more than its share of such connections, a device id
 * longer than its protocol allows closes the connection before any lookup, and a tracker that does not
 * read our replies stops being read instead of making us buffer them.
 */

let database: TestDatabase;
let accountId: number;
const running: TestIngest[] = [];

beforeAll(async () => {
  database = await openTestDatabase();
  accountId = (await fixtures(database.db).account()).id;
});
afterEach(async () => {
  for (const ingest of running.splice(0)) await ingest.close();
});
afterAll(async () => {
  await database?.destroy();
});

async function ingest(protocol: string, limits: Partial<ConnectionLimits> = {}): Promise<TestIngest> {
  const started = await startTestIngest(database, {
    protocol,
    limits: { idleTimeoutMs: 30_000, maxBufferedBytes: 1024 * 1024, ...limits },
  });
  running.push(started);
  return started;
}

async function metric(counter: { get(): Promise<{ values: Array<{ value: number; labels: Record<string, unknown> }> }> }, protocol: string): Promise<number> {
  return (await counter.get()).values.find((v) => v.labels.protocol === protocol)?.value ?? 0;
}

/** A plain socket, connected; `closed` turns true when the server hangs up. */
async function silentPeer(port: number): Promise<{ socket: Socket; readonly closed: boolean }> {
  const socket = connect(port, '127.0.0.1');
  let closed = false;
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  return {
    socket,
    get closed() {
      return closed;
    },
  };
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a tracker port and connections that do not identify', () => {
  it('closes a connection that has not identified within TRACKER_LOGIN_TIMEOUT_S, counts it, and keeps identified ones', async () => {
    const server = await ingest('teltonika', { loginTimeoutMs: 300 });
    const device = await fixtures(database.db).device(accountId);
    const silent = await rawTracker(server.port);
    const identified = await rawTracker(server.port);
    identified.send(teltonikaLogin(device.imei));
    expect((await identified.read(1)).toString('hex')).toBe('01');

    expect(await silent.closedByServer(5_000)).toBe(true);
    expect(server.counters.loginTimeouts).toBe(1);
    // Well past the login timeout, the tracker that identified is still served.
    await settle(600);
    expect(identified.closed).toBe(false);
    identified.end();
  });

  it('closes at once a new connection from an address already holding TRACKER_MAX_UNIDENTIFIED_PER_ADDRESS unidentified ones; identified ones do not count', async () => {
    const server = await ingest('teltonika', { maxUnidentifiedPerAddress: 3 });
    const device = await fixtures(database.db).device(accountId);
    const waiting = await Promise.all([1, 2, 3].map(() => silentPeer(server.port)));
    const fourth = await silentPeer(server.port);
    await settle(300);
    expect(fourth.closed).toBe(true);
    expect(waiting.every((p) => !p.closed)).toBe(true);
    expect(server.counters.unidentifiedRefused).toBe(1);

    // One of the three identifies: it no longer counts, so one more stranger fits (and only one).
    waiting[0]!.socket.write(teltonikaLogin(device.imei));
    await new Promise((resolve) => waiting[0]!.socket.once('data', resolve));
    const fifth = await silentPeer(server.port);
    const sixth = await silentPeer(server.port);
    await settle(300);
    expect(fifth.closed).toBe(false);
    expect(sixth.closed).toBe(true);
    expect(server.counters.unidentifiedRefused).toBe(2);

    // An unidentified one leaving frees its place.
    waiting[1]!.socket.destroy();
    await settle(100);
    const seventh = await silentPeer(server.port);
    await settle(300);
    expect(seventh.closed).toBe(false);
    for (const p of [...waiting, fifth, seventh]) p.socket.destroy();
  });
});

describe('a device id longer than its protocol allows', () => {
  it.each([
    ['h02', `*HQ,${'1'.repeat(1900)},V1,120000,A,2230.0000,N,11400.0000,E,0.00,0,010124,FFFFFBFF#`],
    ['tk103', `(${'A'.repeat(1900)},BP05,000)`],
  ])('%s: is a malformed frame, closed before any device lookup', async (protocol, frame) => {
    const server = await ingest(protocol);
    const malformed = await metric(ingestMetrics.malformedFrames, protocol);
    const t = await rawTracker(server.port);
    t.send(frame);
    expect(await t.closedByServer(5_000)).toBe(true);
    expect(await metric(ingestMetrics.malformedFrames, protocol)).toBe(malformed + 1);
    expect(server.counters.unknownDevices).toBe(0);
  });
});

describe('a tracker that does not read its replies', () => {
  it('stops being read until it drains them, then is served again', async () => {
    const server = await ingest('tk103');
    const id = '027044702512';
    await fixtures(database.db).device(accountId, { imei: id });
    // Handshakes: each answered at once with a reply longer than itself, nothing stored.
    const handshake = `(${id}BP00)`;
    const reply = `(${id}AP01HSO)`;
    const chunk = Buffer.from(handshake.repeat(4096), 'latin1');
    const chunks = 320; // 23 MB, far more than the kernel's socket buffers hold
    const sentFrames = chunks * 4096;
    const before = await metric(ingestMetrics.frames, 'tk103');

    const socket = connect(server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.pause();
    for (let i = 0; i < chunks; i++) socket.write(chunk);

    // Until the server stops decoding (it is stuck on writing), or has read everything.
    let decoded = 0;
    for (let last = -1, deadline = Date.now() + 60_000; Date.now() < deadline; ) {
      await settle(500);
      decoded = (await metric(ingestMetrics.frames, 'tk103')) - before;
      if (decoded === last || decoded >= sentFrames) break;
      last = decoded;
    }
    // What the kernel holds of the replies is a few MB; the rest waits in the tracker, not in us.
    expect(decoded).toBeLessThan(sentFrames / 2);
    expect(socket.writableLength).toBeGreaterThan(chunk.length * chunks / 2);

    // Reading again, the tracker gets its replies and the server reads on.
    let received = 0;
    socket.on('data', (data: Buffer) => (received += data.length));
    socket.resume();
    const wanted = (decoded + 20_000) * reply.length;
    for (let deadline = Date.now() + 60_000; received < wanted && Date.now() < deadline; ) await settle(50);
    expect(received).toBeGreaterThanOrEqual(wanted);
    socket.destroy();
  }, 120_000);
});
