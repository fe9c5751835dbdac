import type pg from 'pg';
import type { Logger } from '../runtime/logger.ts';
import type { Db } from '../db/database.ts';
import { listenForNotifications, type NotificationListener } from '../db/notification-listener.ts';
import { geofenceChangeHorizon, geofenceChangesSince, geofenceDwellTimes, type GeofenceChange } from '../db/geofence-changes.ts';
import type { DeviceMode } from '../db/schema.ts';
import type { DwellRules } from '../domain/geofences/fence-crossings.ts';
import { GeofenceIndex } from '../domain/geofences/geofence-index.ts';
import { loadGeofenceShapes, loadGeofenceShapesById } from './geofence/load-geofence-shapes.ts';

const CHANGES_PER_READ = 10_000;

export interface GeofenceCatalogOptions {
  /** How often the change log is read (it is also read at once on a PostgreSQL notification). */
  pollMs: number;
  /**
   * A catalog that has not read the change log for this long reloads every geofence instead: the
   * changes it did not read may have been pruned meanwhile. Keep it well under the log's retention.
   */
  reloadAfterMs?: number;
  /** The clock (ms), for tests. */
  now?: () => number;
}

/**
 * Every account's geofences as membership indexes, one per account and mode (a test vehicle is
 * evaluated against its account's test geofences only, a live one against the live ones), kept
 * current: a trigger logs each change to a geofence in `geofence_changes` with its transaction's
 * id; this catalog reads the changes made by transactions that were still running at its previous
 * read (see geofenceChangesSince: commit order, not id order) and reloads only the geofences it has
 * not reloaded for that change yet. On PostgreSQL a NOTIFY from the same trigger wakes it at once;
 * the poll covers the embedded database and a notification missed while reconnecting.
 */
export class GeofenceCatalog {
  /** By mode, then by account: the lookup per evaluated device is two property reads and a map get. */
  private readonly indexes: Record<DeviceMode, Map<number, GeofenceIndex>> = { live: new Map(), test: new Map() };
  private readonly dwell = new Map<number, { enterMs: number; exitMs: number }>();
  /** Reads start here: the oldest transaction running at the previous read. */
  private horizon = '0';
  /** Changes applied whose transactions are at or after the horizon (they come back in the next read). */
  private readonly applied = new Map<number, bigint>();
  private timer: NodeJS.Timeout | undefined;
  private listener: NotificationListener | undefined;
  private refreshing: Promise<void> | undefined;
  private closed = false;
  /** When the last successful read of the change log (or load) started. */
  private lastRead = Number.NEGATIVE_INFINITY;

  private constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly reloadAfterMs: number,
    private readonly now: () => number,
  ) {}

  static async open(db: Db, log: Logger, pool: pg.Pool | undefined, options: GeofenceCatalogOptions): Promise<GeofenceCatalog> {
    const catalog = new GeofenceCatalog(db, log, options.reloadAfterMs ?? Number.POSITIVE_INFINITY, options.now ?? Date.now);
    await catalog.loadAll();
    catalog.timer = setInterval(() => void catalog.refresh(), options.pollMs);
    catalog.timer.unref();
    if (pool) {
      catalog.listener = listenForNotifications(pool, 'fleetcore_geofence_changes', () => void catalog.refresh());
      await catalog.listener.ready;
    }
    return catalog;
  }

  /** The geofences a vehicle of this account and mode is evaluated against; undefined when there are none. */
  index(accountId: number, mode: DeviceMode): GeofenceIndex | undefined {
    return this.indexes[mode].get(accountId);
  }

  get dwellRules(): DwellRules {
    return this.dwell;
  }

  /** Every geofence as it is now, replacing whatever was held (at start, and after a stall). */
  private async loadAll(): Promise<void> {
    const startedAt = this.now();
    // Taken before the load: whatever the load does not see was written at or after it.
    const horizon = await geofenceChangeHorizon(this.db);
    const live = await loadGeofenceShapes(this.db, 'live');
    const test = await loadGeofenceShapes(this.db, 'test');
    const dwell = await geofenceDwellTimes(this.db);
    // Swapped in at once, so an evaluation never meets a half-loaded catalog.
    for (const [mode, shapes] of [['live', live], ['test', test]] as const) {
      this.indexes[mode].clear();
      for (const [accountId, index] of shapes) this.indexes[mode].set(accountId, index);
    }
    this.dwell.clear();
    this.setDwell(dwell);
    this.applied.clear();
    this.horizon = horizon;
    this.lastRead = startedAt;
  }

  private async loadDwell(ids: number[]): Promise<void> {
    const rows = await geofenceDwellTimes(this.db, ids);
    for (const id of ids) this.dwell.delete(id);
    this.setDwell(rows);
  }

  private setDwell(rows: Array<{ id: number; enterDwellS: number; exitDwellS: number }>): void {
    for (const r of rows) {
      if (r.enterDwellS > 0 || r.exitDwellS > 0) this.dwell.set(r.id, { enterMs: r.enterDwellS * 1000, exitMs: r.exitDwellS * 1000 });
    }
  }

  /** Applies the changes logged since the last one applied. Safe to call at any time, runs one at a time. */
  refresh(): Promise<void> {
    this.refreshing ??= this.applyChanges()
      .catch((error: Error) => this.log.warn('could not follow geofence changes; retrying', { error: error.message }))
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async applyChanges(): Promise<void> {
    if (this.closed) return;
    const startedAt = this.now();
    if (startedAt - this.lastRead > this.reloadAfterMs) {
      this.log.info('geofence change log not read for a long time (its older changes may be pruned): reloading every geofence', {
        sinceS: Math.round((startedAt - this.lastRead) / 1000),
      });
      await this.loadAll();
      return;
    }
    let nextHorizon: string | undefined;
    const changes: GeofenceChange[] = [];
    for (let afterId = 0; ; ) {
      const page = await geofenceChangesSince(this.db, this.horizon, afterId, CHANGES_PER_READ);
      // The first page's snapshot is the oldest of this refresh: what it missed, the next refresh reads.
      nextHorizon ??= page.horizon;
      for (const c of page.changes) if (!this.applied.has(c.id)) changes.push(c);
      if (page.changes.length < CHANGES_PER_READ) break;
      afterId = page.changes[page.changes.length - 1]!.id;
    }
    if (changes.length > 0) {
      // A geofence changed several times is reloaded once, as it is now.
      const accountOf = new Map(changes.map((c) => [c.geofenceId, c.accountId]));
      const ids = [...accountOf.keys()];
      const current = await loadGeofenceShapesById(this.db, ids);
      for (const [id, accountId] of accountOf) {
        // Out of both modes first: an operator may have moved it to the other mode by hand.
        this.indexes.live.get(accountId)?.remove(id);
        this.indexes.test.get(accountId)?.remove(id);
        const found = current.get(id);
        if (!found) continue;
        const indexes = this.indexes[found.mode];
        let index = indexes.get(found.accountId);
        if (!index) indexes.set(found.accountId, (index = new GeofenceIndex()));
        index.set(found.shape);
      }
      await this.loadDwell(ids);
      for (const c of changes) this.applied.set(c.id, BigInt(c.xid));
    }
    this.horizon = nextHorizon!;
    const horizon = BigInt(this.horizon);
    for (const [id, xid] of this.applied) if (xid < horizon) this.applied.delete(id);
    this.lastRead = startedAt;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.refreshing;
    this.listener?.close();
    this.listener = undefined;
  }
}
