import { CompiledQuery, Kysely, PostgresDialect, type DatabaseConnection, type PostgresPool } from 'kysely';
import pg from 'pg';
import { redactUrl } from '../runtime/redact-url.ts';
import { StartupError } from '../runtime/startup-error.ts';
import { exportPoolMetrics } from './pool-metrics.ts';
import { preparedStatementPool } from './prepared-statement-pool.ts';
import { DEFAULT_READ_REPLICA_MAX_LAG_MS, ReadReplica } from './read-replica.ts';
import type { Database } from './schema.ts';
import { TransactionPoolingDialect } from './transaction-pooling-dialect.ts';
import {
  EMBEDDED_SOCKET_PORT,
  embeddedServerReachable,
  embeddedSocketDir,
  startEmbeddedPostgres,
  type EmbeddedPostgres,
} from './embedded-postgres.ts';

export type Db = Kysely<Database>;

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'embedded';
  /** PostgreSQL's own connections, for what Kysely cannot express (COPY); absent on the embedded database. */
  pool?: pg.Pool;
  /**
   * Connections that may LISTEN: DATABASE_LISTEN_URL's, else `pool` in session mode. Absent on the
   * embedded database and in transaction mode without DATABASE_LISTEN_URL: changes are then found by
   * polling alone.
   */
  listenPool?: pg.Pool;
  /** What the operator should know about this database set-up, for the log at start. */
  warnings: string[];
  /** One line for logs: where the data lives. */
  description: string;
  /** For reads that may be a few seconds old; without DATABASE_READ_URL, `db` itself. */
  staleReads: StaleReads;
  close(): Promise<void>;
}

/**
 * Reads that tolerate staleness (lists, history, reports): `db` answers from the read replica while it
 * is up, within READ_REPLICA_MAX_LAG_MS of the primary and has replayed this process's latest write,
 * and from the primary otherwise.
 */
export interface StaleReads {
  db: Db;
  /** Call after this process commits a write, so its next stale-tolerant read shows it. */
  wrote(): void;
  /** Where the next stale-tolerant read goes. */
  target(): 'replica' | 'primary';
}

/** No replica: every read goes to `db`. */
export function primaryOnly(db: Db): StaleReads {
  return { db, wrote: () => undefined, target: () => 'primary' };
}

export interface OpenDatabaseOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  /**
   * `own`: this process opens the embedded database (the server).
   * `share`: connect to a running server's embedded database, or open it for the duration (CLI commands).
   */
  embedded: 'own' | 'share';
  poolSize?: number;
  /** DATABASE_READ_URL: a streaming replica of DATABASE_URL for reads that tolerate staleness. */
  readDatabaseUrl?: string;
  /** READ_REPLICA_MAX_LAG_MS: past this lag the replica is skipped (default 5000). */
  readReplicaMaxLagMs?: number;
  /**
   * DATABASE_POOL_MODE: `session` (default) when each connection is one PostgreSQL session (direct,
   * or a pooler in session mode); `transaction` behind a pooler in transaction mode, which keeps no
   * session state between transactions.
   */
  poolMode?: PoolMode;
  /** DATABASE_LISTEN_URL: a direct connection for LISTEN, which a transaction pooler cannot carry. */
  listenDatabaseUrl?: string;
}

export type PoolMode = 'session' | 'transaction';
export const POOL_MODES: readonly PoolMode[] = ['session', 'transaction'];

// COUNT(*) and bigint ids come back as int8; every value we keep in one fits a double.
const INT8_OID = 20;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

function kyselyFor(pool: PostgresPool, onCreateConnection?: (connection: DatabaseConnection) => Promise<void>): Db {
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool, onCreateConnection }) });
}

/**
 * Behind a transaction pooler: statements unnamed (a named one prepared in one transaction is not on
 * the server session the next one gets), no `SET` per connection (it would land on one server session
 * and stay there for whoever gets it next), migrations locked per transaction.
 */
function transactionPooledKysely(pool: pg.Pool): Db {
  return new Kysely<Database>({ dialect: new TransactionPoolingDialect({ pool }) });
}

/**
 * Sessions without JIT compilation. It pays off for long analytical queries; ours are short, and a
 * plan over the position history's partitions is costed as if it read every partition (they are pruned
 * at run time), which crosses jit_above_cost. Measured with 98 daily partitions: the engine's
 * evaluation of 200 devices took 450 ms, 360 of them compiling 602 functions, against 34 ms without.
 * Set on each new connection rather than as a startup option, which poolers such as PgBouncer refuse.
 * In transaction mode a session SET is not ours to make; jitLeftOn says so at start instead.
 */
async function withoutJit(connection: DatabaseConnection): Promise<void> {
  await connection.executeQuery(CompiledQuery.raw('SET jit = off'));
}

/**
 * In transaction mode the role's or database's own default decides JIT for every server session the
 * pooler opens; when it leaves JIT on, the warning names the statement that turns it off.
 */
async function jitLeftOn(pool: pg.Pool): Promise<string | undefined> {
  const { rows } = await pool.query<{ jit_on: boolean; role: string }>(
    "SELECT current_setting('jit') = 'on' AND pg_jit_available() AS jit_on, current_user AS role",
  );
  if (!rows[0]?.jit_on) return undefined;
  return (
    'JIT compilation is on for the sessions the pooler opens (DATABASE_POOL_MODE=transaction); reads of the ' +
    `partitioned position history then spend most of their time compiling. Turn it off for fleetcore's role: ALTER ROLE ${rows[0].role} SET jit = off ` +
    '(new server connections take it; RECONNECT in the PgBouncer console renews the pool)'
  );
}

/**
 * A connection the server drops (restart, outage, terminated session) is reported by the query using
 * it, which fails; the 'error' events pg also emits, on idle and on checked-out clients alike, would
 * otherwise crash the process.
 */
function ignoreBrokenConnections(pool: pg.Pool): void {
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
}

async function checkReachable(pool: pg.Pool, what: string): Promise<void> {
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new StartupError(`cannot connect to ${what}: ${(error as Error).message}`);
  }
}

/** Opens the database chosen by configuration: PostgreSQL at DATABASE_URL, or the embedded PGlite in DATA_DIR. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const poolSize = options.poolSize ?? 10;
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: poolSize, connectionTimeoutMillis: 5000, types });
    ignoreBrokenConnections(pool);
    const where = `DATABASE_URL ${redactUrl(options.databaseUrl)}`;
    await checkReachable(pool, where);
    const pooled = options.poolMode === 'transaction';
    const warnings: string[] = [];
    const jit = pooled ? await jitLeftOn(pool) : undefined;
    if (jit) warnings.push(jit);
    const listen = listenPoolFor(options, pool, warnings);
    const prepared = pooled ? pool : preparedStatementPool(pool);
    const db = pooled ? transactionPooledKysely(pool) : kyselyFor(prepared, withoutJit);
    const unexport = exportPoolMetrics(pool);
    const description = `PostgreSQL at ${redactUrl(options.databaseUrl)}${pooled ? ' (transaction pooling)' : ''}`;
    const closeListen = async () => {
      if (listen && listen !== pool) await listen.end();
    };
    if (!options.readDatabaseUrl) {
      return {
        db, pool, listenPool: listen, warnings, kind: 'postgres', description, staleReads: primaryOnly(db),
        close: async () => {
          unexport();
          await closeListen();
          await db.destroy();
        },
      };
    }
    const handle = await withReadReplica({ db, pool, prepared, description, unexport }, options.readDatabaseUrl, options.readReplicaMaxLagMs, poolSize, pooled);
    return {
      ...handle, listenPool: listen, warnings,
      close: async () => {
        await closeListen();
        await handle.close();
      },
    };
  }

  let embedded: EmbeddedPostgres | undefined;
  if (options.embedded === 'own' || !(await embeddedServerReachable(options.dataDir))) {
    embedded = await startEmbeddedPostgres(options.dataDir);
  }
  const pool = new pg.Pool({
    host: embedded?.socketDir ?? embeddedSocketDir(options.dataDir),
    port: EMBEDDED_SOCKET_PORT,
    user: 'postgres',
    database: 'postgres',
    // PGlite runs one query at a time; a few connections only keep the socket busy.
    max: Math.min(poolSize, 4),
    connectionTimeoutMillis: 10_000,
    types,
  });
  ignoreBrokenConnections(pool);
  try {
    await checkReachable(pool, `the embedded database in ${options.dataDir}`);
  } catch (error) {
    await embedded?.stop();
    throw error;
  }
  const db = kyselyFor(pool);
  const unexport = exportPoolMetrics(pool);
  const stop = embedded;
  return {
    db,
    warnings: [],
    staleReads: primaryOnly(db),
    kind: 'embedded',
    description: `embedded PGlite + PostGIS in ${options.dataDir}${stop ? '' : ' (through the running server)'}`,
    async close() {
      unexport();
      await db.destroy();
      await stop?.stop();
    },
  };
}

/**
 * The primary with its read replica. A replica that cannot be reached at start is not an error: reads
 * stay on the primary until it answers, as they would if it went down later.
 */
async function withReadReplica(
  primary: { db: Db; pool: pg.Pool; prepared: PostgresPool; description: string; unexport: () => void },
  readDatabaseUrl: string,
  maxLagMs = DEFAULT_READ_REPLICA_MAX_LAG_MS,
  poolSize: number,
  pooled: boolean,
): Promise<DatabaseHandle> {
  const replicaPool = new pg.Pool({ connectionString: readDatabaseUrl, max: poolSize, connectionTimeoutMillis: 2000, types });
  ignoreBrokenConnections(replicaPool);
  const unexportReplica = exportPoolMetrics(replicaPool);
  // DATABASE_POOL_MODE covers DATABASE_READ_URL too: a replica behind the same kind of pooler.
  const replicaConnections = pooled ? replicaPool : preparedStatementPool(replicaPool);
  const replica = new ReadReplica(primary.pool, replicaPool, { primary: primary.prepared, replica: replicaConnections }, { maxLagMs });
  await replica.start();
  const readDb = pooled ? kyselyFor(replica.routingPool()) : kyselyFor(replica.routingPool(), withoutJit);
  return {
    db: primary.db,
    pool: primary.pool,
    warnings: [],
    kind: 'postgres',
    description: `${primary.description}, read replica at ${redactUrl(readDatabaseUrl)}`,
    staleReads: { db: readDb, wrote: () => replica.wrote(), target: () => replica.target() },
    close: async () => {
      await replica.stop();
      primary.unexport();
      unexportReplica();
      await readDb.destroy();
      await replicaPool.end();
      await primary.db.destroy();
    },
  };
}

/**
 * Where LISTEN goes. In transaction mode a LISTEN through the pooler registers on whichever server
 * session ran it, which then serves other transactions while its notifications go nowhere useful; so
 * there it needs DATABASE_LISTEN_URL, a direct connection, and without one there is none.
 */
function listenPoolFor(options: OpenDatabaseOptions, pool: pg.Pool, warnings: string[]): pg.Pool | undefined {
  if (options.listenDatabaseUrl) {
    // One connection per listener in the process (event feed, geofence catalog, webhook fan-out).
    const listen = new pg.Pool({ connectionString: options.listenDatabaseUrl, max: 4, connectionTimeoutMillis: 5000, types });
    ignoreBrokenConnections(listen);
    return listen;
  }
  if (options.poolMode !== 'transaction') return pool;
  warnings.push(
    'DATABASE_POOL_MODE=transaction without DATABASE_LISTEN_URL: no LISTEN, so geofence changes, new events and webhook fan-out ' +
      'are found by polling alone (up to GEOFENCE_POLL_MS, 250 ms, 100 ms late); set DATABASE_LISTEN_URL to a direct PostgreSQL URL to be woken at once',
  );
  return undefined;
}

/** Runs `work` in a transaction, joining the caller's when `db` already is one. */
export async function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}
