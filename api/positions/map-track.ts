import type { Db } from '../../db/database.ts';
import { countPositionsUpTo, positionsAfter, positionsAt, validTrackAfter, type PositionRange, type PositionRow } from '../../db/position-history.ts';
import { ApiError } from '../api-error.ts';
import { simplifyTrackInChunks, simplifyTrackInSlices, TrackTooIntricateError } from './track-simplifier.ts';

/** Points one GeoJSON answer holds at most, after simplification: what a map still draws smoothly. */
export const MAX_MAP_POINTS = 50_000;
/** Valid fixes a range may hold to be simplified in one answer (three numbers each in memory). */
export const MAX_SIMPLIFIED_FIXES = 1_000_000;

const READ_BATCH = 5_000;
/** The longest the event loop is held by simplification at a time. */
const SIMPLIFY_SLICE_MS = 10;
const TRACK_BATCH = 20_000;

const fmt = (n: number) => n.toLocaleString('en');

async function readRange(db: Db, range: PositionRange): Promise<PositionRow[]> {
  const rows: PositionRow[] = [];
  for (let after: Date | undefined; ; ) {
    const batch = await positionsAfter(db, range, after, READ_BATCH);
    rows.push(...batch);
    if (batch.length < READ_BATCH) return rows;
    after = batch[batch.length - 1]!.fix_time;
  }
}

/**
 * The fixes of a whole range for a map, read in keyset batches. Unsimplified: every fix, refused
 * beyond MAX_MAP_POINTS. Simplified: first the valid fixes' coordinates alone, thinned to
 * `simplifyM` over the whole range, then only the kept fixes' rows, by key.
 */
export async function mapTrackRows(db: Db, range: PositionRange, simplifyM: number | undefined): Promise<PositionRow[]> {
  if (simplifyM === undefined) {
    const count = await countPositionsUpTo(db, range, MAX_MAP_POINTS + 1);
    if (count > MAX_MAP_POINTS) {
      throw new ApiError(400, `The range holds more than ${fmt(MAX_MAP_POINTS)} fixes, more than one GeoJSON answer holds: pass simplify=<metres>, narrow from/to, or use format=json (paged) or format=csv`);
    }
    return readRange(db, range);
  }

  const times: Date[] = [];
  const lats: number[] = [];
  const lngs: number[] = [];
  for (let after: Date | undefined; ; ) {
    const batch = await validTrackAfter(db, range, after, TRACK_BATCH);
    for (const p of batch) {
      times.push(p.fix_time);
      lats.push(p.latitude);
      lngs.push(p.longitude);
    }
    if (times.length > MAX_SIMPLIFIED_FIXES) {
      throw new ApiError(400, `The range holds more than ${fmt(MAX_SIMPLIFIED_FIXES)} valid fixes to simplify; narrow from/to`);
    }
    if (batch.length < TRACK_BATCH) break;
    after = batch[batch.length - 1]!.fix_time;
  }
  // In slices, so other requests are answered meanwhile. A shape that would take the whole track's
  // simplification quadratic time (a vehicle circling, a tracker's periodic jitter) is simplified run by run instead.
  const kept = await simplifyTrackInSlices(lats, lngs, simplifyM, { sliceMs: SIMPLIFY_SLICE_MS, maxTests: Math.max(50_000_000, 40 * lats.length) })
    .catch((error: unknown) => {
      if (error instanceof TrackTooIntricateError) return simplifyTrackInChunks(lats, lngs, simplifyM, { chunk: 2_000, sliceMs: SIMPLIFY_SLICE_MS });
      throw error;
    });
  if (kept.length > MAX_MAP_POINTS) {
    throw new ApiError(400, `Simplified to ${simplifyM} m the track still has ${fmt(kept.length)} points, more than ${fmt(MAX_MAP_POINTS)}: raise simplify or narrow from/to`);
  }
  const rows: PositionRow[] = [];
  for (let i = 0; i < kept.length; i += READ_BATCH) {
    const slice = Array.from(kept.subarray(i, i + READ_BATCH), (k) => times[k]!);
    rows.push(...(await positionsAt(db, range.deviceId, slice)));
  }
  return rows;
}
