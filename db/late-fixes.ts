import { sql, type RawBuilder } from 'kysely';
import type { StoredFix } from './position-batches.ts';

/**
 * Wraps a batch's latest-state upsert so that the same statement also lists the batch's late fixes:
 * those older than their device's newest fix before this batch. The engine may already have evaluated
 * past them, so they go on a list it reads. The upsert locks each device's row and reads its latest
 * committed version (waiting for a concurrent batch of the device to commit first), and keeps the fix
 * time it replaced in `previous_fix_time`; that is what the late fixes are compared with, so of two
 * batches of one device committing at once, the second sees the first's newest fix and no late fix
 * escapes the list. It runs before the batch's positions are written, so a resent fix (already
 * stored, and evaluated when it first came) is told apart from a new one and not listed.
 */
export function upsertListingLateFixesSql(upsert: RawBuilder<unknown>, fixes: StoredFix[]): RawBuilder<unknown> {
  return sql`
    WITH upserted AS (${upsert} RETURNING device_id, previous_fix_time)
    INSERT INTO late_fixes (device_id, fix_time)
    SELECT f.device_id, f.fix_time
    FROM unnest(${fixes.map((f) => f.deviceId)}::int[], ${fixes.map((f) => f.fixTime.toISOString())}::timestamptz[]) AS f(device_id, fix_time)
    JOIN upserted u ON u.device_id = f.device_id
    WHERE f.fix_time < u.previous_fix_time
      AND NOT EXISTS (SELECT 1 FROM positions p WHERE p.device_id = f.device_id AND p.fix_time = f.fix_time)
    ON CONFLICT DO NOTHING
  `;
}
