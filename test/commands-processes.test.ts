import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import type { Device } from '../db/schema.ts';
import { teltonikaDialect } from '../simulators/tracker-dialect.ts';
import { commandTracker } from '../simulators/command-tracker.ts';
import { eventually } from './support/eventually.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { freePort, freshDatabase, serve, type FreshDatabase } from './support/fleet-process.ts';

/**
 * Commands between processes on PostgreSQL + Redis: the API process that queues a command is not the
 * one holding the tracker's connection, so the command must travel through the owner key and the
 * holder's channel. The periodic sweep is off (an hour): only that path can deliver.
 */

/** One HTTP request on a connection of its own, so node:cluster hands each to the next process in turn. */
function call(port: number, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { host: '127.0.0.1', port, method, path: `/api/v1${path}`, agent: false, headers: { Authorization: `Bearer ${key}`, Connection: 'close', ...(payload ? { 'Content-Type': 'application/json' } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function scene(count: number): Promise<{ fresh: FreshDatabase; key: string; devices: Device[] }> {
  const fresh = await freshDatabase();
  const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: '', embedded: 'own' });
  const make = fixtures(setup.db);
  const { account, user } = await make.tenant();
  const key = (await make.key(user.id, { permissions: ['commands:read', 'commands:write'] })).key;
  const devices: Device[] = [];
  for (let i = 0; i < count; i++) devices.push(await make.device(account.id, { userIds: [user.id], protocol: 'teltonika' }));
  await setup.close();
  return { fresh, key, devices };
}

const apiPort = (output: string) => Number(/listening on http:\/\/localhost:(\d+)/.exec(output)![1]);

describe.skipIf(!process.env.DATABASE_URL || !process.env.REDIS_URL)('commands across processes', () => {
  it('reach the ingest process holding the connection from an API process of its own', async () => {
    const { fresh, key, devices } = await scene(1);
    const trackerPort = await freePort();
    const common = { ...fresh.env, REDIS_URL: process.env.REDIS_URL!, COMMAND_SWEEP_S: '3600', DEMO_SEED: 'false' };
    const ingest = await serve({ ...common, PORT: '0', TELTONIKA_PORT: String(trackerPort) }, /trackers on teltonika/, ['--roles', 'ingest,engine']);
    const api = await serve({ ...common, PORT: '0' }, /API listening on/, ['--roles', 'api']);
    try {
      const tracker = await commandTracker(trackerPort, devices[0]!.imei, teltonikaDialect);
      await tracker.report({ speedKmh: 0 });
      const port = apiPort(api.output());
      const posted = await call(port, key, 'POST', '/commands', { deviceId: devices[0]!.imei, type: 'engine_stop' });
      expect(posted.status, JSON.stringify(posted.body)).toBe(202);
      const received = await tracker.nextCommand();
      expect(received?.text, `${ingest.output()}\n${api.output()}`).toBe('setdigout 1');
      tracker.answer(received!);
      await eventually(() => call(port, key, 'GET', `/commands/${posted.body.data.id}`), (r) => expect(r.body.data).toMatchObject({ status: 'acknowledged', response: 'DOUT1:1 Timeout:INFINITY DOUT2:IGNORED' }));
      tracker.close();
    } finally {
      for (const server of [api, ingest]) server.process.kill('SIGTERM');
      expect(await api.exited).toEqual({ code: 0, signal: null });
      expect(await ingest.exited).toEqual({ code: 0, signal: null });
      await fresh.destroy();
    }
  }, 180_000);

  it('with --processes 2, reach the tracker whichever process took the request', async () => {
    const { fresh, key, devices } = await scene(2);
    const trackerPort = await freePort();
    const server = await serve(
      { ...fresh.env, REDIS_URL: process.env.REDIS_URL!, PORT: '0', TELTONIKA_PORT: String(trackerPort), COMMAND_SWEEP_S: '3600', DEMO_SEED: 'false' },
      /listening on http/,
      ['--processes', '2'],
    );
    try {
      // Both processes up before the first request, so round-robin has two to choose from.
      const both = Date.now() + 60_000;
      while ((server.output().match(/API listening on/g) ?? []).length < 2 && Date.now() < both) await new Promise((r) => setTimeout(r, 100));
      const port = apiPort(server.output());
      const trackers = await Promise.all(devices.map((d) => commandTracker(trackerPort, d.imei, teltonikaDialect)));
      for (const t of trackers) await t.report({ speedKmh: 0 });
      // Three requests per tracker in a row, each on a new connection: the primary hands connections
      // to the processes in turn, so each tracker's commands are queued on both processes while one
      // of them holds it. (Alternating trackers instead could line up with the turns and never cross.)
      for (let i = 0; i < 6; i++) {
        const device = devices[Math.floor(i / 3)]!;
        const tracker = trackers[Math.floor(i / 3)]!;
        const type = i % 4 < 2 ? 'siren_on' : 'siren_off';
        const posted = await call(port, key, 'POST', '/commands', { deviceId: device.imei, type });
        expect(posted.status).toBe(202);
        const received = await tracker.nextCommand();
        expect(received?.text, `command ${i}\n${server.output()}`).toBe(type === 'siren_on' ? 'setdigout ?1' : 'setdigout ?0');
        tracker.answer(received!);
        await eventually(() => call(port, key, 'GET', `/commands/${posted.body.data.id}`), (r) => expect(r.body.data.status).toBe('acknowledged'));
      }
      for (const t of trackers) t.close();
    } finally {
      server.process.kill('SIGTERM');
      expect(await server.exited).toEqual({ code: 0, signal: null });
      await fresh.destroy();
    }
  }, 180_000);
});
