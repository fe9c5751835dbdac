import { sql } from 'kysely';
import type pg from 'pg';
import type { Logger } from '../cli/logger.ts';
import type { Db } from '../db/database.ts';
import type { DwellRules } from './fence-crossings.ts';
import { GeofenceIndex } from './geofence/geofence-index.ts';
import { loadGeofenceShapes, loadGeofenceShapesById } from './geofence/load-geofence-shapes.ts';

export interface GeofenceCatalogOptions {
  /** How often the change log is read (it is also read at once on a PostgreSQL notification). */
  pollMs: number;
}

/**
 * Every account's geofences as membership indexes, kept current: a trigger logs each change to a
 * geofence in `geofence_changes`; this catalog reads the log after the last change it applied and
 * reloads only those geofences. On PostgreSQL a NOTIFY from the same trigger wakes it at once; the
 * poll covers the embedded database and a notification missed while reconnecting.
 */
export class GeofenceCatalog {
  private readonly indexes = new Map<number, GeofenceIndex>();
  private readonly dwell = new Map<number, { enterMs: number; exitMs: number }>();
  private lastChange = 0;
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
    const { rows } = await sql<{ id: number }>`SELECT coalesce(max(id), 0)::int AS id FROM geofence_changes`.execute(this.db);
    this.lastChange = rows[0]!.id;
    for (const [accountId, index] of await loadGeofenceShapes(this.db)) this.indexes.set(accountId, index);
    await this.loadDwell();
  }

  private async loadDwell(ids?: number[]): Promise<void> {
    const rows = await this.db
      .selectFrom('geofences')
      .select(['id', 'enter_dwell_s', 'exit_dwell_s'])
      .$if(ids !== undefined, (q) => q.where('id', 'in', ids!))
      .$if(ids === undefined, (q) => q.where((eb) => eb.or([eb('enter_dwell_s', '>', 0), eb('exit_dwell_s', '>', 0)])))
      .execute();
    for (const id of ids ?? []) this.dwell.delete(id);
    for (const r of rows) {
      if (r.enter_dwell_s > 0 || r.exit_dwell_s > 0) this.dwell.set(r.id, { enterMs: r.enter_dwell_s * 1000, exitMs: r.exit_dwell_s * 1000 });
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
    const changes = await this.db
      .selectFrom('geofence_changes')
      .select(['id', 'geofence_id', 'account_id'])
      .where('id', '>', this.lastChange)
      .orderBy('id')
      .limit(10_000)
      .execute();
    if (changes.length === 0) return;
    // A geofence changed several times is reloaded once, as it is now.
    const accountOf = new Map(changes.map((c) => [c.geofence_id, c.account_id]));
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
    this.lastChange = changes[changes.length - 1]!.id;
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
