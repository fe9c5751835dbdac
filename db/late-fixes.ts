import { sql, type RawBuilder } from 'kysely';
import type { StoredFix } from './position-batches.ts';

/**
 * Locks the latest-state rows of a batch's devices, in device order, before anything of the batch is
 * written. Every batch does so first, so batches sharing devices take turns instead of deadlocking, and
 * the second of two batches of one device reads the first one's newest fix (see markLateFixesSql).
 */
export function lockLatestStatesSql(deviceIds: number[]): RawBuilder<unknown> {
  const ids = [...new Set(deviceIds)].sort((a, b) => a - b);
  return sql`SELECT device_id FROM device_states WHERE device_id = ANY(${ids}::int[]) ORDER BY device_id FOR UPDATE`;
}

/**
 * Notes the fixes of a batch that are older than their device's newest stored fix: the engine may
 * already have evaluated past them, so they go on a list it reads. Run after lockLatestStatesSql, so
 * the newest fix read here is the committed one and no late fix escapes the list.
 */
export function markLateFixesSql(fixes: StoredFix[]): RawBuilder<unknown> {
  return sql`
    INSERT INTO late_fixes (device_id, fix_time)
    SELECT f.device_id, f.fix_time
    FROM unnest(${fixes.map((f) => f.deviceId)}::int[], ${fixes.map((f) => f.fixTime.toISOString())}::timestamptz[]) AS f(device_id, fix_time)
    JOIN device_states s ON s.device_id = f.device_id
    WHERE f.fix_time < s.fix_time
      -- A resent fix is already stored and was evaluated when it first came.
      AND NOT EXISTS (SELECT 1 FROM positions p WHERE p.device_id = f.device_id AND p.fix_time = f.fix_time)
    ON CONFLICT DO NOTHING
  `;
}
