import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrateTo, migrateToLatest } from '../db/migrator.ts';
import { openEmptyDatabase } from '../db/empty-database.ts';

// Migration 0014: geofences get a mode. Those written before it were the account's, seen by live and test
// keys alike; they become live, as the live keys are the ones that meant them.

const depot = (accountId: number, name: string, mode?: 'live' | 'test') => sql`
  INSERT INTO geofences (account_id, name, kind, geom, center_lat, center_lng, radius_m, vertex_count, vertices ${mode ? sql`, mode` : sql``})
  VALUES (${accountId}, ${name}, 'polygon', ST_GeomFromText('POLYGON((-99.11 19.39, -99.09 19.39, -99.09 19.41, -99.11 19.39))', 4326), 19.4, -99.1, 1000, 3, '[]'
    ${mode ? sql`, ${mode}` : sql``})
  RETURNING id`;

describe('migration 0014-geofence-modes', () => {
  it('makes every existing geofence live, names unique per account and mode, and goes down without losing a geofence', async () => {
    const empty = await openEmptyDatabase();
    try {
      await migrateTo(empty.db, '0013-positions-partitions');
      const { rows: [account] } = await sql<{ id: number }>`INSERT INTO accounts (name) VALUES ('Old') RETURNING id`.execute(empty.db);
      await depot(account!.id, 'Depot').execute(empty.db);
      await depot(account!.id, 'Yard').execute(empty.db);

      await migrateToLatest(empty.db);
      const modes = async () => (await sql<{ name: string; mode: string }>`SELECT name, mode FROM geofences ORDER BY id`.execute(empty.db)).rows;
      expect(await modes()).toEqual([{ name: 'Depot', mode: 'live' }, { name: 'Yard', mode: 'live' }]);

      // The same name in the other mode is another geofence; in the same mode it clashes.
      await depot(account!.id, 'Depot', 'test').execute(empty.db);
      await expect(depot(account!.id, 'Yard', 'live').execute(empty.db)).rejects.toThrow(/unique|duplicate/i);
      await expect(depot(account!.id, 'Other', 'staging' as 'live').execute(empty.db)).rejects.toThrow(/check/i);
      // Written without a mode (an operator's SQL, an older process): live.
      await depot(account!.id, 'By hand').execute(empty.db);
      expect((await modes()).map((r) => `${r.name} ${r.mode}`)).toEqual(['Depot live', 'Yard live', 'Depot test', 'By hand live']);

      // Down: names are unique per account again, so the test "Depot" is renamed, not dropped.
      await migrateTo(empty.db, '0013-positions-partitions');
      const { rows } = await sql<{ name: string }>`SELECT name FROM geofences ORDER BY id`.execute(empty.db);
      expect(rows.map((r) => r.name)).toEqual(['Depot', 'Yard', expect.stringMatching(/^Depot \(test \d+\)$/), 'By hand']);
      await migrateToLatest(empty.db);
      expect((await modes()).map((r) => r.mode)).toEqual(['live', 'live', 'live', 'live']);
    } finally {
      await empty.destroy();
    }
  }, 180_000);
});
