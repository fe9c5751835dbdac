import { CompiledQuery, Kysely, PostgresDialect, type DatabaseConnection, type PostgresPool } from 'kysely';
import pg from 'pg';
import { redactUrl } from '../runtime/redact-url.ts';
import { StartupError } from '../runtime/startup-error.ts';
import { exportPoolMetrics } from './pool-metrics.ts';
import { preparedStatementPool } from './prepared-statement-pool.ts';
import type { Database } from './schema.ts';
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
  /** One line for logs: where the data lives. */
  description: string;
  close(): Promise<void>;
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
}

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
 * Sessions without JIT compilation. It pays off for long analytical queries; ours are short, and a
 * plan over the position history's partitions is costed as if it read every partition (they are pruned
 * at run time), which crosses jit_above_cost. Measured with 98 daily partitions: the engine's
 * evaluation of 200 devices took 450 ms, 360 of them compiling 602 functions, against 34 ms without.
 * Set on each new connection rather than as a startup option, which poolers such as PgBouncer refuse.
 */
async function withoutJit(connection: DatabaseConnection): Promise<void> {
  await connection.executeQuery(CompiledQuery.raw('SET jit = off'));
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
    const db = kyselyFor(preparedStatementPool(pool), withoutJit);
    const unexport = exportPoolMetrics(pool);
    return {
      db, pool, kind: 'postgres', description: `PostgreSQL at ${redactUrl(options.databaseUrl)}`,
      close: async () => {
        unexport();
        await db.destroy();
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
    kind: 'embedded',
    description: `embedded PGlite + PostGIS in ${options.dataDir}${stop ? '' : ' (through the running server)'}`,
    async close() {
      unexport();
      await db.destroy();
      await stop?.stop();
    },
  };
}

/** Runs `work` in a transaction, joining the caller's when `db` already is one. */
export async function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}
