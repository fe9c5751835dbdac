import { describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { freePort, freshDatabase, serve } from './support/fleet-process.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';

/**
 * `fleet serve --processes 2` on the real servers: two server processes behind the same tracker and
 * HTTP ports (node:cluster). Trackers on several connections are served and stored, the API answers,
 * and SIGTERM stops every process cleanly.
 */
describe.skipIf(!process.env.DATABASE_URL || !process.env.REDIS_URL)('fleet serve --processes', () => {
  it('shares the tracker and API ports between processes', async () => {
    const fresh = await freshDatabase();
    try {
      const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: '', embedded: 'own' });
      const make = fixtures(setup.db);
      const { account, user, key } = await make.tenant();
      const imeis = Array.from({ length: 6 }, (_, i) => `35630704245${String(i).padStart(4, '0')}`);
      for (const imei of imeis) await make.device(account.id, { imei, userIds: [user.id] });
      await setup.close();

      const trackerPort = await freePort();
      const server = await serve({ ...fresh.env, REDIS_URL: process.env.REDIS_URL!, PORT: '0', TELTONIKA_PORT: String(trackerPort) }, /listening on http/, ['--processes', '2']);
      try {
        const trackers = await Promise.all(imeis.map((imei) => scriptedTracker(trackerPort, imei)));
        await Promise.all(trackers.map((t, i) => t.report({ latitude: 19.4 + i / 100, longitude: -99.1 })));
        for (const t of trackers) t.close();
        // Ports are shared, so the printed port is the same for both; either process may answer.
        const port = /listening on http:\/\/localhost:(\d+)/.exec(server.output())![1];
        const response = await fetch(`http://127.0.0.1:${port}/api/v1/devices/status`, { headers: { Authorization: `Bearer ${key}` } });
        const body = (await response.json()) as { data: Array<{ deviceId: string; latitude: number | null }> };
        expect(body.data.filter((d) => d.latitude !== null).map((d) => d.deviceId).sort()).toEqual(imeis);
        const both = Date.now() + 60_000;
        while ((server.output().match(/API listening on/g) ?? []).length < 2 && Date.now() < both) await new Promise((r) => setTimeout(r, 100));
        expect((server.output().match(/API listening on/g) ?? []).length, server.output()).toBe(2);
      } finally {
        server.process.kill('SIGTERM');
        expect(await server.exited).toEqual({ code: 0, signal: null });
      }
    } finally {
      await fresh.destroy();
    }
  }, 120_000);
});
