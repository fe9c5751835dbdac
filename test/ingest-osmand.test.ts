import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../simulators/fleet-records.ts';
import { startTestIngest, type TestIngest } from './support/ingest-server.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

let database: TestDatabase;
let listener: TestIngest;
let base: string;

beforeAll(async () => {
  database = await openTestDatabase();
  listener = await startTestIngest(database, { protocol: 'osmand' });
  base = `http://127.0.0.1:${listener.port}`;
});
afterAll(async () => {
  await listener?.close();
  await database?.destroy();
});

describe('OsmAnd over HTTP', () => {
  it('answers 200 once the fix is stored, by GET and by form POST; a repeat is stored once', async () => {
    const account = await fixtures(database.db).account();
    const device = await fixtures(database.db).device(account.id, { imei: 'phone-42' });
    const get = await fetch(`${base}/?id=phone-42&lat=19.43&lon=-99.13&timestamp=1714573800&speed=20&bearing=90`);
    expect(get.status).toBe(200);
    const post = await fetch(base, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'id=phone-42&lat=19.44&lon=-99.14&timestamp=1714573860',
    });
    expect(post.status).toBe(200);
    expect((await fetch(`${base}/?id=phone-42&lat=19.43&lon=-99.13&timestamp=1714573800`)).status).toBe(200);
    const rows = await database.db.selectFrom('positions').select(['latitude', 'speed_kmh']).where('device_id', '=', device.id).orderBy('fix_time').execute();
    expect(rows).toEqual([{ latitude: 19.43, speed_kmh: 37.04 }, { latitude: 19.44, speed_kmh: null }]);
    const state = await database.db.selectFrom('device_states').select('latitude').where('device_id', '=', device.id).executeTakeFirstOrThrow();
    expect(state.latitude).toBe(19.44);
  });

  it('answers 404 for an unknown device and 400 for an unreadable request', async () => {
    expect((await fetch(`${base}/?id=nobody&lat=1&lon=2`)).status).toBe(404);
    const bad = await fetch(`${base}/?id=phone-42&lat=north&lon=2`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/lat/);
  });
});
