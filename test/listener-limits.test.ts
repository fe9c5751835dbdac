import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import { teltonikaLogin } from '../simulators/teltonika-packets.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { freePort, freshDatabase, serve, type FreshDatabase } from './support/fleet-process.ts';
import { startTestIngest } from './support/ingest-server.ts';
import { rawTracker } from './support/raw-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

/** Opens `n` connections and keeps them; resolves once each has connected or failed. */
async function flood(port: number, n: number): Promise<{ sockets: Socket[]; closedByServer(): number }> {
  const sockets: Socket[] = [];
  let closed = 0;
  await Promise.all(
    Array.from({ length: n }, () => new Promise<void>((resolve) => {
      const s = connect(port, '127.0.0.1');
      sockets.push(s);
      s.on('close', () => closed++);
      s.on('error', () => resolve());
      s.once('connect', () => resolve());
    })),
  );
  await new Promise((r) => setTimeout(r, 300));
  return { sockets, closedByServer: () => closed };
}

describe('a tracker listener at its maximum connections', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database?.destroy();
  });

  it('closes connections past TRACKER_MAX_CONNECTIONS at once, counts them, and serves trackers again once some leave', async () => {
    const ingest = await startTestIngest(database, { maxConnections: 20 });
    try {
      const device = await fixtures(database.db).device((await fixtures(database.db).account()).id);
      const crowd = await flood(ingest.port, 25);
      expect(crowd.closedByServer()).toBe(5);
      expect(ingest.counters.connectionsRefused).toBe(5);
      for (const s of crowd.sockets) s.destroy();
      await new Promise((r) => setTimeout(r, 100));
      const t = await rawTracker(ingest.port);
      t.send(teltonikaLogin(device.imei));
      expect((await t.read(1)).toString('hex')).toBe('01');
      t.end();
    } finally {
      await ingest.close();
    }
  });
});

/**
 * `fleet serve` out of file descriptors: the process's open-file limit is lowered while it runs, and
 * more trackers connect than it can hold. Accepts fail (EMFILE); the process must survive it and, once
 * the crowd leaves, serve trackers and the API again.
 */
describe('fleet serve out of file descriptors', () => {
  it('survives EMFILE on accept and serves again afterwards', async () => {
    const fresh: FreshDatabase = await freshDatabase();
    const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.dataDir ?? '', embedded: 'own' });
    const device = await fixtures(setup.db).device((await fixtures(setup.db).account()).id);
    await setup.close();
    const trackerPort = await freePort();
    const server = await serve({ ...fresh.env, PORT: '0', TELTONIKA_PORT: String(trackerPort), TRACKER_MAX_CONNECTIONS: '100000' });
    try {
      const pid = server.process.pid!;
      const open = readdirSync(`/proc/${pid}/fd`).length;
      execFileSync('prlimit', [`--pid=${pid}`, `--nofile=${open + 40}:${open + 40}`]);
      const crowd = await flood(trackerPort, 200);
      expect(server.process.exitCode, server.output()).toBeNull();
      for (const s of crowd.sockets) s.destroy();
      await new Promise((r) => setTimeout(r, 500));
      expect(server.process.exitCode, server.output()).toBeNull();
      const api = server.url.replace('//localhost:', '//127.0.0.1:');
      expect((await fetch(`${api}/healthz`)).status).toBe(200);
      const t = await rawTracker(trackerPort);
      t.send(teltonikaLogin(device.imei));
      expect((await t.read(1)).toString('hex')).toBe('01');
      t.end();
    } finally {
      server.process.kill('SIGTERM');
      await server.exited;
      await fresh.destroy();
    }
  }, 120_000);
});
