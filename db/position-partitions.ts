import { sql } from 'kysely';
import type { Db } from './database.ts';
import { partitionName, type PartitionRange } from './position-partition-plan.ts';

/** One range partition of `positions`, as the catalog has it. */
export interface PositionPartition extends PartitionRange {
  name: string;
}

export interface PositionPartitions {
  ranges: PositionPartition[];
  /** The DEFAULT partition's name (migration 0013 makes `positions_default`), if there is one. */
  defaultPartition: string | undefined;
}

const COLUMNS = sql.raw('device_id, fix_time, server_time, valid, latitude, longitude, altitude, speed_kmh, heading, satellites, ignition, attributes');

// Any constant works as long as every engine process uses the same one ("flpp").
const PARTITIONS_LOCK = 0x666c7070;

/**
 * How long partition DDL waits for a table lock before giving up until the next run. Dropping a
 * partition needs an exclusive lock on `positions`; queued behind a long read (a big CSV export), it
 * would in turn hold up every ingest write queued behind it. Partitions are made days ahead and
 * dropped days late, so giving up costs nothing.
 */
const LOCK_TIMEOUT = '2s';

/**
 * The partitions of `positions`. Their bounds are turned into epoch milliseconds by PostgreSQL itself
 * (the bound text is written in the session's time zone); a bound that is not a time (MINVALUE,
 * MAXVALUE, of a partition made by hand) reads as minus or plus infinity.
 */
export async function positionPartitions(db: Db): Promise<PositionPartitions> {
  const { rows } = await sql<{ name: string; bound: string; from_ms: number | null; to_ms: number | null }>`
    SELECT name, bound,
      extract(epoch FROM (regexp_match(bound, 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz) * 1000 AS from_ms,
      extract(epoch FROM (regexp_match(bound, 'TO \\(''([^'']+)''\\)'))[1]::timestamptz) * 1000 AS to_ms
    FROM (
      SELECT c.relname::text AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'positions'::regclass
    ) partitions
    ORDER BY from_ms NULLS FIRST
  `.execute(db);
  const ranges: PositionPartition[] = [];
  let defaultPartition: string | undefined;
  for (const r of rows) {
    if (r.bound === 'DEFAULT') defaultPartition = r.name;
    else ranges.push({ name: r.name, from: r.from_ms === null ? -Infinity : Number(r.from_ms), to: r.to_ms === null ? Infinity : Number(r.to_ms) });
  }
  return { ranges, defaultPartition };
}

/**
 * Runs `work` in a transaction holding the partition maintenance lock, or returns undefined at once
 * when another engine process holds it (it is doing the same work). DDL in it waits at most
 * LOCK_TIMEOUT for a table lock, then fails with SQLSTATE 55P03 and changes nothing.
 */
export async function withPartitionLock<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T | undefined> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('lock_timeout', ${LOCK_TIMEOUT}, true)`.execute(trx);
    const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(${PARTITIONS_LOCK}) AS locked`.execute(trx);
    return rows[0]!.locked ? work(trx) : undefined;
  });
}

/**
 * Makes the partition for `range` inside the caller's transaction; returns how many fixes it took over
 * from the default partition.
 *
 * PostgreSQL refuses a partition for a range the default partition holds rows of (a tracker's clock
 * ran ahead, or no engine ran while those days came). So the partition is built as a plain table,
 * filled with those rows (moved, not copied, under an exclusive lock on the default partition so no
 * insert slips in between), and then attached. Attaching locks `positions` only in SHARE UPDATE
 * EXCLUSIVE mode, which ingest's writes and every read go on through; CREATE TABLE … PARTITION OF
 * would lock it exclusively. A batch routed to the default partition before the lock, writing a row of
 * the new range after it, fails its partition check; the ingest writer splits and retries it, and the
 * retry routes the row to the new partition.
 */
export async function createPositionPartition(trx: Db, range: PartitionRange, defaultPartition: string | undefined): Promise<{ name: string; moved: number }> {
  const name = partitionName(range.from);
  const from = new Date(range.from).toISOString();
  const to = new Date(range.to).toISOString();
  await sql`CREATE TABLE ${sql.table(name)} (LIKE positions INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)`.execute(trx);
  let moved = 0;
  if (defaultPartition) {
    await sql`LOCK TABLE ${sql.table(defaultPartition)} IN ACCESS EXCLUSIVE MODE`.execute(trx);
    const result = await sql`
      WITH moved AS (
        DELETE FROM ${sql.table(defaultPartition)} WHERE fix_time >= ${from}::timestamptz AND fix_time < ${to}::timestamptz
        RETURNING ${COLUMNS}
      )
      INSERT INTO ${sql.table(name)} (${COLUMNS}) SELECT ${COLUMNS} FROM moved
    `.execute(trx);
    moved = Number(result.numAffectedRows ?? 0);
  }
  await sql`ALTER TABLE positions ATTACH PARTITION ${sql.table(name)} FOR VALUES FROM (${sql.lit(from)}) TO (${sql.lit(to)})`.execute(trx);
  return { name, moved };
}

/** Drops a whole partition: its fixes go at once, and their space back to the system. */
export async function dropPositionPartition(trx: Db, name: string): Promise<void> {
  await sql`DROP TABLE ${sql.table(name)}`.execute(trx);
}

/**
 * The oldest fix time the default partition holds in [from, to), by its fix-time index: a day that
 * has fixes there but no partition (no engine ran then) is found one index lookup at a time.
 */
export async function oldestDefaultFix(db: Db, defaultPartition: string, from: Date, to: Date): Promise<Date | undefined> {
  const { rows } = await sql<{ oldest: Date | null }>`
    SELECT min(fix_time) AS oldest FROM ${sql.table(defaultPartition)}
    WHERE fix_time >= ${from.toISOString()}::timestamptz AND fix_time < ${to.toISOString()}::timestamptz
  `.execute(db);
  return rows[0]?.oldest ?? undefined;
}

/**
 * Deletes up to `limit` fixes of the default partition that arrived before `olderThan`; returns how
 * many. Counted from arrival, not fix time: the fixes left there are those no partition is made for
 * (a clock in 1970 or 2080, a tracker's buffer of last year), and a fix that just arrived is kept the
 * retention like any other, while one stuck in 2080 is not kept for 55 years.
 */
export async function pruneDefaultPositions(db: Db, defaultPartition: string, olderThan: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM ${sql.table(defaultPartition)} WHERE (device_id, fix_time) IN (
        SELECT device_id, fix_time FROM ${sql.table(defaultPartition)} WHERE server_time < ${olderThan.toISOString()}::timestamptz LIMIT ${limit}
      ) RETURNING 1
    ) SELECT count(*)::int AS n FROM gone
  `.execute(db);
  return rows[0]!.n;
}

/** Bytes on disk of every partition of the position history, and of its parts. */
export interface PositionHistorySize {
  partitions: number;
  rows: number;
  /** Rows' pages with their free-space and visibility maps. */
  heapBytes: number;
  /** The primary key (device_id, fix_time) of every partition, and any other index. */
  indexBytes: number;
  /** Values too large for a page (long attributes) kept out of line. */
  toastBytes: number;
  totalBytes: number;
}

/** What the whole history takes on disk now: pg_total_relation_size of each partition, split into its parts. */
export async function positionHistorySize(db: Db): Promise<PositionHistorySize> {
  const { rows } = await sql<{ partitions: number; table_bytes: number; index_bytes: number; toast_bytes: number; total_bytes: number }>`
    SELECT count(*)::int AS partitions,
      sum(pg_table_size(c.oid))::float8 AS table_bytes,
      sum(pg_indexes_size(c.oid))::float8 AS index_bytes,
      sum(CASE WHEN c.reltoastrelid <> 0 THEN pg_total_relation_size(c.reltoastrelid) ELSE 0 END)::float8 AS toast_bytes,
      sum(pg_total_relation_size(c.oid))::float8 AS total_bytes
    FROM pg_partition_tree('positions') t JOIN pg_class c ON c.oid = t.relid
    WHERE t.isleaf
  `.execute(db);
  const { rows: counted } = await sql<{ n: number }>`SELECT count(*)::float8 AS n FROM positions`.execute(db);
  const r = rows[0]!;
  return {
    partitions: r.partitions, rows: counted[0]!.n, heapBytes: r.table_bytes - r.toast_bytes, indexBytes: r.index_bytes, toastBytes: r.toast_bytes, totalBytes: r.total_bytes,
  };
}
