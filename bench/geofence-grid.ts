import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/**
 * A grid of 150 m squares over the ±10 km the simulated vehicles drive in, one every `stepDeg`
 * (0.0025°, ~275 m, by default), so a vehicle at city speed crosses a boundary every few tens of
 * seconds; a smaller step gives more crossings. One statement: the benches are about the pipeline,
 * not about creating geofences.
 */
export async function seedGrid(db: Db, accountId: number, center: { lat: number; lng: number }, stepDeg = 0.0025): Promise<number> {
  const cells = Math.floor(0.18 / stepDeg);
  await sql`
    WITH cells AS (
      SELECT i, j, ${center.lng} - 0.09 + i * ${stepDeg}::float8 AS x, ${center.lat} - 0.09 + j * ${stepDeg}::float8 AS y
      FROM generate_series(0, ${cells}) i, generate_series(0, ${cells}) j
    )
    INSERT INTO geofences (account_id, name, kind, geom, center_lat, center_lng, radius_m, vertex_count, vertices)
    SELECT ${accountId}, 'Cell ' || i || '-' || j, 'polygon', ST_MakeEnvelope(x - 0.0007, y - 0.0007, x + 0.0007, y + 0.0007, 4326),
      y, x, 105, 4, jsonb_build_array(
        jsonb_build_object('lat', y - 0.0007, 'lng', x - 0.0007), jsonb_build_object('lat', y - 0.0007, 'lng', x + 0.0007),
        jsonb_build_object('lat', y + 0.0007, 'lng', x + 0.0007), jsonb_build_object('lat', y + 0.0007, 'lng', x - 0.0007))
    FROM cells
    ON CONFLICT (account_id, mode, name) DO NOTHING
  `.execute(db);
  const { n } = await db.selectFrom('geofences').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
  return Number(n);
}

