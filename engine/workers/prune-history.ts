import type { Db } from '../../db/database.ts';
import { pruneGeofenceChanges } from '../../db/geofence-changes.ts';
import { pruneLateFixes } from '../../db/late-fixes.ts';
import { pruneEvents } from '../../db/event-log.ts';
import { pruneFinishedDeliveries } from '../../db/webhook-deliveries.ts';
import { pruneOauthTokens } from '../../db/oauth-tokens.ts';
import { pruneMedia } from '../../db/media.ts';

/** Expired access tokens stay a day (introspection still answers inactive for an unknown one), then go. */
const EXPIRED_TOKENS_KEPT_MS = 86_400_000;

export interface Retention {
  /** Geofence changes are kept this long: far longer than any engine process takes to read them. */
  geofenceChangesMs: number;
  /** Late-fix entries the engine never came back for (a device that went silent) are dropped after this. */
  lateFixesMs: number;
  /** Events older than this leave the log (never before webhook fan-out has read them). */
  eventsMs?: number;
  /** Finished webhook deliveries (succeeded or failed) are kept this long. */
  webhookDeliveriesMs?: number;
  /** Photos trackers sent are deleted this long after they arrived (MEDIA_RETENTION_DAYS; absent, kept for ever). */
  mediaMs?: number;
}

/** Rows deleted per statement: each is a short transaction, never one long one. */
const BATCH = 5_000;

async function inBatches(prune: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await prune(BATCH);
    total += n;
    if (n < BATCH) return total;
  }
}

/** Deletes what the engine has finished with and kept past its retention; returns the counts. */
export async function pruneEngineHistory(
  db: Db,
  retention: Retention,
  now = new Date(),
): Promise<{ geofenceChanges: number; lateFixes: number; events: number; webhookDeliveries: number; oauthTokens: number; media: number }> {
  const before = (ms: number) => new Date(now.getTime() - ms);
  return {
    geofenceChanges: await inBatches((limit) => pruneGeofenceChanges(db, before(retention.geofenceChangesMs), limit)),
    lateFixes: await inBatches((limit) => pruneLateFixes(db, before(retention.lateFixesMs), limit)),
    events: retention.eventsMs === undefined ? 0 : await inBatches((limit) => pruneEvents(db, before(retention.eventsMs!), limit)),
    webhookDeliveries:
      retention.webhookDeliveriesMs === undefined ? 0 : await inBatches((limit) => pruneFinishedDeliveries(db, before(retention.webhookDeliveriesMs!), limit)),
    oauthTokens: await inBatches((limit) => pruneOauthTokens(db, before(EXPIRED_TOKENS_KEPT_MS), limit)),
    // Photos are large: a few hundred per statement keeps each delete short.
    media: retention.mediaMs === undefined ? 0 : await inBatches((limit) => pruneMedia(db, before(retention.mediaMs!), Math.min(limit, 500))),
  };
}
