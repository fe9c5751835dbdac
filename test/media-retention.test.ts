import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeMedia } from '../db/media.ts';
import { pruneEngineHistory } from '../engine/workers/prune-history.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database?.destroy();
});

const DAY = 86_400_000;

async function picture(deviceId: number, text: string) {
  const bytes = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.from(text), Buffer.from([0xff, 0xd9])]);
  const { media } = await storeMedia(database.db, {
    deviceId, takenAt: null, contentType: 'image/jpeg', fileName: `${text}.jpg`, sha256: createHash('sha256').update(bytes).digest('hex'),
    protocol: 'meitrack', commandId: null, bytes,
  });
  return media;
}

describe('photos past MEDIA_RETENTION_DAYS', () => {
  it('are deleted by the engine\'s prune job, newer ones kept, and none without a retention (0: for ever)', async () => {
    const make = fixtures(database.db);
    const { account } = await make.tenant();
    const device = await make.device(account.id);
    const old = await picture(device.id, 'old');
    const recent = await picture(device.id, 'recent');
    await sql`UPDATE media SET received_at = now() - interval '100 days' WHERE id = ${old.id}::bigint`.execute(database.db);

    // No retention (MEDIA_RETENTION_DAYS=0): nothing goes.
    expect((await pruneEngineHistory(database.db, { geofenceChangesMs: DAY, lateFixesMs: DAY })).media).toBe(0);
    expect((await pruneEngineHistory(database.db, { geofenceChangesMs: DAY, lateFixesMs: DAY, mediaMs: 90 * DAY })).media).toBe(1);
    const left = await sql<{ id: string }>`SELECT id::text AS id FROM media WHERE device_id = ${device.id} ORDER BY id`.execute(database.db);
    expect(left.rows.map((r) => r.id)).toEqual([recent.id]);
  });

  it('stores a picture sent again by the same vehicle once, with one event', async () => {
    const make = fixtures(database.db);
    const { account } = await make.tenant();
    const device = await make.device(account.id);
    const first = await picture(device.id, 'same');
    const again = await picture(device.id, 'same');
    expect(again.id).toBe(first.id);
    const events = await sql<{ n: number }>`SELECT count(*)::int AS n FROM events WHERE device_id = ${device.id} AND type = 'vehicle.media'`.execute(database.db);
    expect(events.rows[0]!.n).toBe(1);
  });
});
