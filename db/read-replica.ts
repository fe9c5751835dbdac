import { type PostgresPool, type PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { metricsRegistry, prom } from '../runtime/metrics.ts';
import { parseLsn, readTarget, replayedThrough, type LsnSample, type ReplicaCheck } from './read-target.ts';

/** READ_REPLICA_MAX_LAG_MS when unset: a few seconds, like the latest-state reads' own second of age, with room for a busy replica. */
export const DEFAULT_READ_REPLICA_MAX_LAG_MS = 5000;
/** How often the replica is measured. */
export const REPLICA_CHECK_INTERVAL_MS = 1000;
/** Samples of the primary's position kept while the replica does not reach them: an hour at one a second. */
const MAX_SAMPLES = 3600;

const replicaLag = new prom.Gauge({
  name: 'fleetcore_read_replica_lag_seconds',
  help: 'How far the read replica is behind the primary: the age of the newest primary WAL position it has replayed, as of its last good check (see fleetcore_read_replica_up)',
  registers: [metricsRegistry],
  aggregator: 'max',
});
const replicaUp = new prom.Gauge({
  name: 'fleetcore_read_replica_up',
  help: '1 when the read replica answered its last check and is replaying, else 0',
  registers: [metricsRegistry],
  aggregator: 'min',
});
const readConnections = new prom.Counter({
  name: 'fleetcore_read_connections_total',
  help: 'Connections taken for reads that tolerate staleness, by where they went (replica, primary)',
  labelNames: ['target'],
  registers: [metricsRegistry],
});

export interface ReadReplicaOptions {
  maxLagMs: number;
  checkIntervalMs?: number;
}

/**
 * The read replica (DATABASE_READ_URL) beside the primary: measures it every second, and hands out
 * connections for stale-tolerant reads from it while the rule in read-target.ts allows, else from the
 * primary. A replica that refuses a connection is taken for down until its next good check.
 */
export class ReadReplica {
  private check: ReplicaCheck | undefined;
  private readonly samples: LsnSample[] = [];
  private lastOwnWriteAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly rule: { maxLagMs: number; maxCheckAgeMs: number };
  private readonly intervalMs: number;

  constructor(
    private readonly primary: pg.Pool,
    private readonly replica: pg.Pool,
    /** The two pools as Kysely uses them (prepared statements). */
    private readonly connections: { primary: PostgresPool; replica: PostgresPool },
    options: ReadReplicaOptions,
  ) {
    this.intervalMs = options.checkIntervalMs ?? REPLICA_CHECK_INTERVAL_MS;
    this.rule = { maxLagMs: options.maxLagMs, maxCheckAgeMs: 3 * this.intervalMs + 2000 };
  }

  /** Measures once now, then every interval until `stop`. */
  async start(): Promise<void> {
    await this.measure();
    const tick = () => {
      this.timer = setTimeout(async () => {
        this.running = this.measure();
        await this.running;
        if (this.timer) tick();
      }, this.intervalMs);
      this.timer.unref();
    };
    tick();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** This process has committed a write: stale reads stay on the primary until the replica has replayed it. */
  wrote(): void {
    this.lastOwnWriteAt = Date.now();
  }

  target(): 'replica' | 'primary' {
    return readTarget(this.check, Date.now(), this.rule, this.lastOwnWriteAt);
  }

  /** A pool for Kysely whose every connection goes where `target()` says at that moment. */
  routingPool(): PostgresPool {
    return {
      connect: async (): Promise<PostgresPoolClient> => {
        if (this.target() === 'replica') {
          try {
            const client = await this.connections.replica.connect();
            readConnections.inc({ target: 'replica' });
            return replicaClient(client, () => this.connections.primary.connect(), () => this.markDown());
          } catch {
            this.markDown();
          }
        }
        readConnections.inc({ target: 'primary' });
        return this.connections.primary.connect();
      },
      // The two pools belong to the database handle, which ends them.
      end: async () => undefined,
    };
  }

  /** Taken for down until the next good measurement. */
  private markDown(): void {
    this.check = { at: Date.now(), up: false };
    replicaUp.set(0);
  }

  /** One measurement: the primary's WAL position first, then how far the replica has replayed. */
  async measure(): Promise<void> {
    const sampledAt = Date.now();
    try {
      const { rows: [primaryRow] } = await this.primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      this.samples.push({ at: sampledAt, lsn: parseLsn(primaryRow!.lsn) });
      if (this.samples.length > MAX_SAMPLES) this.samples.shift();
    } catch {
      // The primary's own outage is told by every query; without a sample the replica is measured against older ones.
    }
    try {
      const { rows: [row] } = await this.replica.query<{ replay: string | null; recovering: boolean }>(
        'SELECT pg_last_wal_replay_lsn()::text AS replay, pg_is_in_recovery() AS recovering',
      );
      const at = Date.now();
      // A replica promoted to primary, or not yet replaying, cannot say what it holds.
      if (!row!.recovering || row!.replay === null || this.samples.length === 0) throw new Error('not replaying');
      const through = replayedThrough(this.samples, parseLsn(row!.replay));
      const lagMs = at - (through ?? this.samples[0]!.at);
      this.check = { at, up: true, replayedThrough: through, lagMs };
      replicaUp.set(1);
      replicaLag.set(lagMs / 1000);
    } catch {
      this.check = { at: Date.now(), up: false };
      replicaUp.set(0);
    }
  }

  /** The latest measurement, for logs and tests. */
  latest(): ReplicaCheck | undefined {
    return this.check;
  }
}

/** SQLSTATEs after which a read is worth asking the primary: the connection is gone or the replica cancelled it. */
const REPLICA_FAILURES = new Set([
  '57P01', '57P02', '57P03', // the replica shutting down or starting
  '40001', // a statement cancelled by a conflict with recovery (the primary removed rows it was reading)
]);
const SOCKET_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);

function replicaFailed(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  if (code && (REPLICA_FAILURES.has(code) || code.startsWith('08') || SOCKET_FAILURES.has(code))) return true;
  return /^Connection terminated|connection error and is not queryable/.test(message ?? '');
}

const TRANSACTION_START = /^\s*(begin|start transaction)\b/i;

/**
 * A replica connection that carries a failed read over to the primary: a replica stopped between two
 * measurements costs the read a retry, not an error. Only single statements are retried; inside a
 * transaction the error stands, as a retry there would mix two databases' views.
 */
function replicaClient(replica: PostgresPoolClient, primary: () => Promise<PostgresPoolClient>, failed: () => void): PostgresPoolClient {
  let fallback: PostgresPoolClient | undefined;
  let inTransaction = false;
  const client = {
    query(sqlOrCursor: unknown, parameters?: readonly unknown[]) {
      if (fallback) return (fallback.query as Function)(sqlOrCursor, parameters);
      // Cursors (streamed reads) are handed through: their rows may already be on their way.
      if (typeof sqlOrCursor !== 'string') return (replica.query as Function)(sqlOrCursor, parameters);
      if (TRANSACTION_START.test(sqlOrCursor)) inTransaction = true;
      const asked = (replica.query as Function)(sqlOrCursor, parameters) as Promise<unknown>;
      return asked.catch(async (error: unknown) => {
        if (!replicaFailed(error)) throw error;
        failed();
        if (inTransaction) throw error;
        fallback = await primary();
        readConnections.inc({ target: 'primary' });
        return (fallback.query as Function)(sqlOrCursor, parameters);
      });
    },
    release() {
      // pg's pool drops a connection that is no longer queryable instead of keeping it.
      replica.release();
      fallback?.release();
    },
  };
  return client as unknown as PostgresPoolClient;
}
