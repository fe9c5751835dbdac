import type pg from 'pg';
import type { Logger } from '../runtime/logger.ts';
import type { Db } from '../db/database.ts';
import { geofenceChangeHorizon, geofenceChangesSince, geofenceDwellTimes, type GeofenceChange } from '../db/geofence-changes.ts';
import type { DwellRules } from './fence-crossings.ts';
import { GeofenceIndex } from './geofence/geofence-index.ts';
import { loadGeofenceShapes, loadGeofenceShapesById } from './geofence/load-geofence-shapes.ts';

const CHANGES_PER_READ = 10_000;

export interface GeofenceCatalogOptions {
  /** How often the change log is read (it is also read at once on a PostgreSQL notification). */
  pollMs: number;
}

/**
 * Every account's geofences as membership indexes, kept current: a trigger logs each change to a
 * geofence in `geofence_changes` with its transaction's id; this catalog reads the changes made by
 * transactions that were still running at its previous read (see geofenceChangesSince: commit order,
 * not id order) and reloads only the geofences it has not reloaded for that change yet. On PostgreSQL
 * a NOTIFY from the same trigger wakes it at once; the poll covers the embedded database and a
 * notification missed while reconnecting.
 */
export class GeofenceCatalog {
  private readonly indexes = new Map<number, GeofenceIndex>();
  private readonly dwell = new Map<number, { enterMs: number; exitMs: number }>();
  /** Reads start here: the oldest transaction running at the previous read. */
  private horizon = '0';
  /** Changes applied whose transactions are at or after the horizon (they come back in the next read). */
  private readonly applied = new Map<number, bigint>();
  private timer: NodeJS.Timeout | undefined;
  private listener: { client: pg.PoolClient; release(): void } | undefined;
  private refreshing: Promise<void> | undefined;
  private closed = false;

  private constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  static async open(db: Db, log: Logger, pool: pg.Pool | undefined, options: GeofenceCatalogOptions): Promise<GeofenceCatalog> {
    const catalog = new GeofenceCatalog(db, log);
    await catalog.loadAll();
    catalog.timer = setInterval(() => void catalog.refresh(), options.pollMs);
    catalog.timer.unref();
    if (pool) await catalog.listen(pool);
    return catalog;
  }

  index(accountId: number): GeofenceIndex | undefined {
    return this.indexes.get(accountId);
  }

  get dwellRules(): DwellRules {
    return this.dwell;
  }

  private async loadAll(): Promise<void> {
    // Taken before the load: whatever the load does not see was written at or after it.
    this.horizon = await geofenceChangeHorizon(this.db);
    for (const [accountId, index] of await loadGeofenceShapes(this.db)) this.indexes.set(accountId, index);
    await this.loadDwell();
  }

  private async loadDwell(ids?: number[]): Promise<void> {
    const rows = await geofenceDwellTimes(this.db, ids);
    for (const id of ids ?? []) this.dwell.delete(id);
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
        const found = current.get(id);
        if (found) {
          let index = this.indexes.get(found.accountId);
          if (!index) this.indexes.set(found.accountId, (index = new GeofenceIndex()));
          index.set(found.shape);
        } else {
          this.indexes.get(accountId)?.remove(id);
        }
      }
      await this.loadDwell(ids);
      for (const c of changes) this.applied.set(c.id, BigInt(c.xid));
    }
    this.horizon = nextHorizon!;
    const horizon = BigInt(this.horizon);
    for (const [id, xid] of this.applied) if (xid < horizon) this.applied.delete(id);
  }

  private async listen(pool: pg.Pool): Promise<void> {
    try {
      const client = await pool.connect();
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        client.removeAllListeners('notification');
        client.release(true); // a LISTENing session is not handed to anyone else
      };
      client.on('notification', () => void this.refresh());
      client.on('error', () => {
        // The poll keeps the catalog current meanwhile; listening resumes on a new connection.
        if (this.listener?.client === client) this.listener = undefined;
        release();
        if (!this.closed) setTimeout(() => void this.listen(pool), 1_000).unref();
      });
      await client.query('LISTEN fleetcore_geofence_changes');
      if (this.closed) release();
      else this.listener = { client, release };
    } catch {
      if (!this.closed) setTimeout(() => void this.listen(pool), 1_000).unref();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.refreshing;
    const listener = this.listener;
    this.listener = undefined;
    listener?.release();
  }
}
