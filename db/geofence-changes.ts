import { sql } from 'kysely';
import type { Db } from './database.ts';

export interface GeofenceChange {
  id: number;
  geofenceId: number;
  accountId: number;
}

/** The id of the newest logged geofence change (0 when there is none). */
export async function lastGeofenceChangeId(db: Db): Promise<number> {
  const { rows } = await sql<{ id: number }>`SELECT coalesce(max(id), 0)::int AS id FROM geofence_changes`.execute(db);
  return rows[0]!.id;
}

/** Logged changes after `afterId`, oldest first. */
export async function geofenceChangesAfter(db: Db, afterId: number, limit: number): Promise<GeofenceChange[]> {
  const rows = await db
    .selectFrom('geofence_changes')
    .select(['id', 'geofence_id', 'account_id'])
    .where('id', '>', afterId)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, geofenceId: r.geofence_id, accountId: r.account_id }));
}

/** Debounce settings of the given geofences, or of every geofence that has one. */
export async function geofenceDwellTimes(db: Db, ids?: number[]): Promise<Array<{ id: number; enterDwellS: number; exitDwellS: number }>> {
  const rows = await db
    .selectFrom('geofences')
    .select(['id', 'enter_dwell_s', 'exit_dwell_s'])
    .$if(ids !== undefined, (q) => q.where('id', 'in', ids!.length > 0 ? ids! : [-1]))
    .$if(ids === undefined, (q) => q.where((eb) => eb.or([eb('enter_dwell_s', '>', 0), eb('exit_dwell_s', '>', 0)])))
    .execute();
  return rows.map((r) => ({ id: r.id, enterDwellS: r.enter_dwell_s, exitDwellS: r.exit_dwell_s }));
}
