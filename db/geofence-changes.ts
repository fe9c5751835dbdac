import { sql } from 'kysely';
import type { Db } from './database.ts';

export interface GeofenceChange {
  id: number;
  geofenceId: number;
  accountId: number;
  /** The writing transaction's id (xid8) as a decimal string. */
  xid: string;
}

/**
 * Where a reader of the change log can start: the oldest transaction still running, as the
 * statement's snapshot sees it. Every change not visible yet was made by a transaction at or after it.
 */
export async function geofenceChangeHorizon(db: Db): Promise<string> {
  const { rows } = await sql<{ horizon: string }>`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon`.execute(db);
  return rows[0]!.horizon;
}

/**
 * The logged changes made by transactions at or after `horizon` (those a previous read may not have
 * seen, committed or not at the time), oldest first from after `afterId` (to page), and the horizon to read from next time, taken
 * from the same snapshot: a change is skipped by a read only if its transaction was still running,
 * which puts it at or after that read's horizon, so the next read sees it. Identity ids are given
 * at insert, not at commit, which is why following `id > last seen` would miss a slow transaction's
 * lower id.
 */
export async function geofenceChangesSince(db: Db, horizon: string, afterId: number, limit: number): Promise<{ changes: GeofenceChange[]; horizon: string }> {
  const { rows } = await sql<{ id: number; geofence_id: number | null; account_id: number | null; xid: string | null; horizon: string }>`
    WITH snapshot AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon)
    SELECT c.id, c.geofence_id, c.account_id, c.xid::text AS xid, s.horizon
    FROM snapshot s
    LEFT JOIN LATERAL (
      SELECT id, geofence_id, account_id, xid FROM geofence_changes WHERE xid >= ${horizon}::xid8 AND id > ${afterId} ORDER BY id LIMIT ${limit}
    ) c ON true
  `.execute(db);
  const changes = rows.filter((r) => r.id !== null).map((r) => ({ id: r.id, geofenceId: r.geofence_id!, accountId: r.account_id!, xid: r.xid! }));
  return { changes, horizon: rows[0]!.horizon };
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

/** Deletes changes older than `olderThan`, at most `limit` rows; returns how many went. */
export async function pruneGeofenceChanges(db: Db, olderThan: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM geofence_changes WHERE id IN (
        SELECT id FROM geofence_changes WHERE changed_at < ${olderThan.toISOString()}::timestamptz ORDER BY id LIMIT ${limit}
      ) RETURNING 1
    ) SELECT count(*)::int AS n FROM gone
  `.execute(db);
  return rows[0]!.n;
}
