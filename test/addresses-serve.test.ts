import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { eventually } from './support/eventually.ts';
import { freePort, freshDatabase, serve, type Serving } from './support/fleet-process.ts';
import { scriptedTracker } from './support/scripted-tracker.ts';

// `fleet serve` as configured by its environment: GEOCODER=nominatim at a local server answering
// Nominatim's /reverse JSON, a Teltonika tracker over TCP, and the address in the device status.

describe('fleet serve with GEOCODER=nominatim', () => {
  it('shows the address the provider gives for a reported position within seconds', async () => {
    const asked: string[] = [];
    const provider = createServer((req, res) => {
      const url = new URL(req.url!, 'http://localhost');
      asked.push(`${url.pathname} ${url.searchParams.get('lat')} ${url.searchParams.get('lon')}`);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({
        place_id: 7, lat: url.searchParams.get('lat'), lon: url.searchParams.get('lon'),
        display_name: 'Plaza de la Constitución, Centro, Cuauhtémoc, Ciudad de México, 06000, México',
      }));
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    const fresh = await freshDatabase();
    let server: Serving | undefined;
    try {
      const setup = await openDatabase({ databaseUrl: fresh.env.DATABASE_URL, dataDir: fresh.dataDir ?? '', embedded: 'own' });
      const make = fixtures(setup.db);
      const { account, user, key } = await make.tenant();
      const van = await make.device(account.id, { userIds: [user.id], protocol: 'teltonika' });
      await setup.close();

      const trackerPort = await freePort();
      server = await serve({
        ...fresh.env, PORT: '0', DEMO_SEED: 'false', TELTONIKA_PORT: String(trackerPort),
        GEOCODER: 'nominatim', GEOCODER_URL: `http://127.0.0.1:${(provider.address() as AddressInfo).port}`, GEOCODER_RATE_PER_S: '20', LOG_LEVEL: 'info',
      });
      const tracker = await scriptedTracker(trackerPort, van.imei);
      await tracker.report({ latitude: 19.4326, longitude: -99.1332 });
      tracker.close();

      const api = server.url.replace('//localhost:', '//127.0.0.1:');
      const status = async () => {
        const response = await fetch(`${api}/api/v1/devices/status`, { headers: { Authorization: `Bearer ${key}` } });
        return ((await response.json()) as any).data.find((d: any) => d.deviceId === van.imei);
      };
      await eventually(status, (s) => expect(s?.address, server!.output()).toBe('Plaza de la Constitución, Centro, Cuauhtémoc, Ciudad de México, 06000, México'), 15_000);
      expect(asked).toEqual(['/reverse 19.4326 -99.1332']);
      // The offline places (its fallback) are loaded as the engine role starts, which is before ingest and the API.
      expect(server.output()).toMatch(/"provider":"nominatim","ms":\d+,"msg":"geocoder ready"/);
    } finally {
      server?.process.kill('SIGTERM');
      if (server) expect(await server.exited).toEqual({ code: 0, signal: null });
      provider.closeAllConnections();
      await new Promise((resolve) => provider.close(resolve));
      await fresh.destroy();
    }
  }, 180_000);
});
