import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.ts';
import type { StoredFix } from '../domain/stored-rows.ts';

/** Runs a statement in the batch's transaction and gives its rows. */
export type RunStatement = <R>(statement: RawBuilder<R>) => Promise<R[]>;

/**
 * Runs a batch's latest-state upsert so that it also lists the batch's late fixes: those older than
 * their device's newest fix before this batch. The engine may already have evaluated past them, so
 * they go on a list it reads. The upsert locks each device's row and reads its latest committed
 * version (waiting for a concurrent batch of the device to commit first), and keeps the fix time it
 * replaced in `previous_fix_time`; that is what the late fixes are compared with, so of two batches of
 * one device committing at once, the second sees the first's newest fix and no late fix escapes the
 * list. It runs before the batch's positions are written, so a resent fix (already stored, and
 * evaluated when it first came) is told apart from a new one and not listed.
 *
 * Two steps, the second only when needed: the upsert names the devices whose oldest fix in the batch
 * is behind their previous newest one (rare: most batches are in order), then only those devices'
 * older fixes are looked up in the history. Sending every fix's time to compare in the database cost
 * more than the upsert itself (measured).
 */
export async function upsertListingLateFixes(run: RunStatement, upsert: RawBuilder<unknown>, fixes: StoredFix[]): Promise<void> {
  const oldest = new Map<number, number>();
  for (const f of fixes) {
    const time = f.fixTime.getTime();
    const held = oldest.get(f.deviceId);
    if (held === undefined || time < held) oldest.set(f.deviceId, time);
  }
  const behind = await run(sql<{ device_id: number; previous_fix_time: Date }>`
    WITH upserted AS (${upsert} RETURNING device_id, previous_fix_time)
    SELECT u.device_id, u.previous_fix_time
    FROM upserted u
    JOIN unnest(${[...oldest.keys()]}::int[], ${[...oldest.values()].map((t) => new Date(t).toISOString())}::timestamptz[]) AS o(device_id, oldest)
      ON o.device_id = u.device_id
    WHERE o.oldest < u.previous_fix_time
  `);
  if (behind.length === 0) return;
  const previous = new Map(behind.map((r) => [r.device_id, r.previous_fix_time.getTime()]));
  const late = fixes.filter((f) => f.fixTime.getTime() < (previous.get(f.deviceId) ?? Number.NEGATIVE_INFINITY));
  await run(sql`
    INSERT INTO late_fixes (device_id, fix_time)
    SELECT l.device_id, l.fix_time
    FROM unnest(${late.map((f) => f.deviceId)}::int[], ${late.map((f) => f.fixTime.toISOString())}::timestamptz[]) AS l(device_id, fix_time)
    WHERE NOT EXISTS (SELECT 1 FROM positions p WHERE p.device_id = l.device_id AND p.fix_time = l.fix_time)
    ON CONFLICT DO NOTHING
  `);
}

/** Deletes entries received before `olderThan`, at most `limit`; returns how many went. */
export async function pruneLateFixes(db: Db, olderThan: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM late_fixes WHERE (device_id, fix_time) IN (
        SELECT device_id, fix_time FROM late_fixes WHERE received_at < ${olderThan.toISOString()}::timestamptz LIMIT ${limit}
      ) RETURNING 1
    ) SELECT count(*)::int AS n FROM gone
  `.execute(db);
  return rows[0]!.n;
}

/**
 * Takes the listed late fixes of these devices off the list (inside the engine's transaction, so
 * they come back if it fails), as fix times in ms per device.
 */
export async function takeLateFixes(trx: Db, deviceIds: number[]): Promise<Map<number, number[]>> {
  const { rows } = await sql<{ device_id: number; fix_time: Date }>`
    DELETE FROM late_fixes WHERE device_id = ANY(${deviceIds}::int[]) RETURNING device_id, fix_time
  `.execute(trx);
  const byDevice = new Map<number, number[]>();
  for (const r of rows) {
    const list = byDevice.get(r.device_id);
    if (list) list.push(r.fix_time.getTime());
    else byDevice.set(r.device_id, [r.fix_time.getTime()]);
  }
  return byDevice;
}

export interface WindowPosition {
  fixTime: Date;
  valid: boolean;
  latitude: number;
  longitude: number;
}

/**
 * A device's positions from the last one before `from` (the evaluated fix a late run starts after)
 * through `to`, oldest first.
 */
export async function positionsAround(trx: Db, deviceId: number, from: Date, to: Date): Promise<WindowPosition[]> {
  const { rows } = await sql<{ fix_time: Date; valid: boolean; latitude: number; longitude: number }>`
    SELECT fix_time, valid, latitude, longitude FROM positions
    WHERE device_id = ${deviceId}
      AND fix_time >= coalesce(
        (SELECT max(fix_time) FROM positions WHERE device_id = ${deviceId} AND fix_time < ${from.toISOString()}::timestamptz),
        ${from.toISOString()}::timestamptz)
      AND fix_time <= ${to.toISOString()}::timestamptz
    ORDER BY fix_time
  `.execute(trx);
  return rows.map((r) => ({ fixTime: r.fix_time, valid: r.valid, latitude: r.latitude, longitude: r.longitude }));
}

/** Adds to each device's counts of late fixes evaluated and of those too old to be. */
export async function countLateFixes(trx: Db, counts: Array<{ deviceId: number; evaluated: number; ignored: number }>): Promise<void> {
  if (counts.length === 0) return;
  await sql`
    UPDATE device_engine_states s SET late_fixes = s.late_fixes + c.evaluated, late_fixes_ignored = s.late_fixes_ignored + c.ignored
    FROM unnest(${counts.map((c) => c.deviceId)}::int[], ${counts.map((c) => c.evaluated)}::int[], ${counts.map((c) => c.ignored)}::int[])
      AS c(device_id, evaluated, ignored)
    WHERE s.device_id = c.device_id
  `.execute(trx);
}
