import { join, resolve } from 'node:path';
import { TRACKER_PROTOCOLS } from '../../ingest/protocol-catalog.ts';

/** Where the repository is: `fleet` runs from here, and `.local-cluster/` is made here by default. */
export const REPOSITORY = resolve(import.meta.dirname, '../..');

/** 17000 and up: clear of PostgreSQL (5432), Redis (6379), fleet's own 3000 and the trackers' 50xx. */
export const DEFAULT_PORT_BASE = 17000;

export const INGEST_NODES = 2;
export const ENGINE_NODES = 2;
export const API_NODES = 2;
export const REDIS_MASTERS = 3;

/** PgBouncer's pool_mode, and so fleet's DATABASE_POOL_MODE. */
export type PoolMode = 'session' | 'transaction';

export interface TrackerPorts {
  protocol: string;
  /** fleet's variable for it (TELTONIKA_PORT …). */
  variable: string;
  /** Where trackers connect: HAProxy's frontend. */
  public: number;
  /** Each ingest node's own listener, in node order. */
  nodes: number[];
}

/** Every port and path of one local cluster: a pure function of the port base and the state directory. */
export interface ClusterLayout {
  dir: string;
  portBase: number;
  /** HAProxy's HTTP frontend in front of the API nodes. */
  apiPort: number;
  /** HAProxy's statistics page (/stats). */
  statsPort: number;
  /** Masters first, then one replica per master. */
  redisPorts: number[];
  /** Each node's cluster bus (Redis's default, port + 10000, could land anywhere), in the same order. */
  redisBusPorts: number[];
  postgresPrimaryPort: number;
  postgresReplicaPort: number;
  pgbouncerPort: number;
  /**
   * `session` (the default): a client keeps its server connection, as a direct connection would.
   * `transaction`: PgBouncer shares server connections between transactions; the nodes then get
   * DATABASE_POOL_MODE=transaction and DATABASE_LISTEN_URL at the primary for LISTEN.
   */
  poolMode: PoolMode;
  apiNodePorts: number[];
  trackers: TrackerPorts[];
  /** One subdirectory per part, under `dir`. */
  paths: { redis: string; postgres: string; pgbouncer: string; haproxy: string; fleet: string };
}

/**
 * Ports, from `base` up: +0 the API through HAProxy, +1 HAProxy's statistics, +10… Redis, +20/+21
 * PostgreSQL primary/replica, +22 PgBouncer, +30… the API nodes, +40… the Redis cluster bus, +100… the public tracker ports (one
 * per protocol, in the catalog's order), +200… the first ingest node's, +300… the second's.
 */
export function clusterLayout(base: number, dir: string, poolMode: PoolMode = 'session'): ClusterLayout {
  if (!Number.isInteger(base) || base < 1024 || base + 400 > 65535) throw new Error(`the port base must be an integer from 1024 to 65135; got ${base}`);
  const absolute = resolve(dir);
  return {
    dir: absolute,
    portBase: base,
    apiPort: base,
    statsPort: base + 1,
    redisPorts: Array.from({ length: REDIS_MASTERS * 2 }, (_, i) => base + 10 + i),
    redisBusPorts: Array.from({ length: REDIS_MASTERS * 2 }, (_, i) => base + 40 + i),
    postgresPrimaryPort: base + 20,
    postgresReplicaPort: base + 21,
    pgbouncerPort: base + 22,
    poolMode,
    apiNodePorts: Array.from({ length: API_NODES }, (_, i) => base + 30 + i),
    trackers: TRACKER_PROTOCOLS.map(({ protocol, portVariable }, i) => ({
      protocol: protocol.name,
      variable: portVariable,
      public: base + 100 + i,
      nodes: Array.from({ length: INGEST_NODES }, (_, n) => base + 200 + n * 100 + i),
    })),
    paths: {
      redis: join(absolute, 'redis'),
      postgres: join(absolute, 'postgres'),
      pgbouncer: join(absolute, 'pgbouncer'),
      haproxy: join(absolute, 'haproxy'),
      fleet: join(absolute, 'fleet'),
    },
  };
}

/** LOCAL_CLUSTER_DIR, LOCAL_CLUSTER_PORT_BASE and LOCAL_CLUSTER_POOL_MODE, or the defaults. */
export function layoutFromEnvironment(env: NodeJS.ProcessEnv = process.env): ClusterLayout {
  const base = env.LOCAL_CLUSTER_PORT_BASE ? Number(env.LOCAL_CLUSTER_PORT_BASE) : DEFAULT_PORT_BASE;
  const poolMode = env.LOCAL_CLUSTER_POOL_MODE || 'session';
  if (poolMode !== 'session' && poolMode !== 'transaction') throw new Error(`LOCAL_CLUSTER_POOL_MODE must be session or transaction; got ${poolMode}`);
  return clusterLayout(base, env.LOCAL_CLUSTER_DIR || join(REPOSITORY, '.local-cluster'), poolMode);
}
