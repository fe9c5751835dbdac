import { EventSource } from 'eventsource';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { freePort, freshDatabase, serve } from './support/fleet-process.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';

/**
 * vehicle.position through `fleet serve` as deployed in parts: the tracker reports to an ingest
 * process, the stream is open on an API process of its own (the positions cross through Redis), and
 * the webhook is sent by the ingest process that stored the fixes.
 */

const apiPort = (output: string) => Number(/listening on http:\/\/localhost:(\d+)/.exec(output)![1]);

describe.skipIf(!process.env.DATABASE_URL || !process.env.REDIS_URL)('vehicle.position across processes', () => {
  it('reaches a stream on another process and a webhook, each stored fix once', async () => {
    const fresh = await freshDatabase();
    const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: '', embedded: 'own' });
    const make = fixtures(setup.db);
    const { account, user, key } = await make.tenant();
    const imei = '356307042448811';
    await make.device(account.id, { imei, name: 'Split Van', userIds: [user.id], protocol: 'teltonika' });

    const hooked: string[] = [];
    let secret = '';
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const payload = new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), req.headers as IncomingHttpHeaders & Record<string, string>) as any;
        for (const e of payload.data.events) hooked.push(e.id);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));

    const trackerPort = await freePort();
    const common = { ...fresh.env, REDIS_URL: process.env.REDIS_URL!, DEMO_SEED: 'false', WEBHOOK_ALLOW_PRIVATE: 'true' };
    const ingest = await serve({ ...common, PORT: '0', TELTONIKA_PORT: String(trackerPort) }, /trackers on teltonika/, ['--roles', 'ingest,engine']);
    const api = await serve({ ...common, PORT: '0' }, /API listening on/, ['--roles', 'api']);
    const base = `http://127.0.0.1:${apiPort(api.output())}/api/v1`;
    const streamed: Array<{ id: string; lastEventId: string }> = [];
    let source: EventSource | undefined;
    try {
      const registered = await fetch(`${base}/webhooks`, {
        method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['vehicle.position'] }),
      });
      expect(registered.status).toBe(201);
      secret = ((await registered.json()) as any).data.secret;
      source = new EventSource(`${base}/events/stream?types=vehicle.position`, {
        fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${key}` } }),
      });
      source.addEventListener('vehicle.position', (m) => streamed.push({ id: JSON.parse(m.data as string).id, lastEventId: m.lastEventId }));
      await new Promise<void>((resolve, reject) => {
        source!.addEventListener('open', () => resolve(), { once: true });
        source!.addEventListener('error', (e) => reject(new Error(`stream: ${(e as any).message}`)), { once: true });
      });
      // The ingest process reads the webhooks that name vehicle.position every 5 s.
      await new Promise((r) => setTimeout(r, 6_000));

      const tracker = await scriptedTracker(trackerPort, imei);
      const start = Math.floor(Date.now() / 1000) * 1000 - 60_000;
      const times = Array.from({ length: 8 }, (_, i) => new Date(start + i * 1000));
      try {
        await tracker.reportAll(times.slice(0, 4).reverse().map((time) => ({ time, latitude: 19.4, longitude: -99.1 })));
        for (const time of times.slice(4)) await tracker.report({ time, latitude: 19.41, longitude: -99.1 });
      } finally {
        tracker.close();
      }
      const expected = times.map((t) => `pos_${imei}_${t.getTime()}`);
      const deadline = Date.now() + 15_000;
      while ((hooked.length < expected.length || streamed.length < expected.length) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 500));
      expect(hooked, `${ingest.output()}\n${api.output()}`).toEqual(expected);
      expect(streamed.map((s) => s.id)).toEqual(expected);
      expect(streamed.every((s) => s.lastEventId === '')).toBe(true);
    } finally {
      source?.close();
      for (const server of [api, ingest]) server.process.kill('SIGTERM');
      expect(await api.exited).toEqual({ code: 0, signal: null });
      expect(await ingest.exited).toEqual({ code: 0, signal: null });
      receiver.close();
      receiver.closeAllConnections();
      await setup.close();
      await fresh.destroy();
    }
  }, 180_000);
});
