import cluster from 'node:cluster';
import { createMemoryRateLimiter } from '../../api/rate-limit/memory-rate-limiter.ts';
import { createRedisRateLimiter } from '../../api/rate-limit/redis-rate-limiter.ts';
import { RedisStreamLeases } from '../../api/events/redis-stream-leases.ts';
import { openDatabase, type DatabaseHandle } from '../../db/database.ts';
import { MigrationError, migrateToLatest } from '../../db/migrator.ts';
import { exportQueueDepth, exportQueueUp } from '../../engine/engine-metrics.ts';
import { bullmqQueues } from '../../engine/queue/bullmq-queues.ts';
import { inProcessQueues } from '../../engine/queue/in-process-queue.ts';
import { EngineQueues } from '../../engine/engine-queues.ts';
import { WEBHOOKS_QUEUE } from '../../engine/webhooks/webhook-jobs.ts';
import { InProcessCommandBus, type CommandBus } from '../../ingest/commands/command-bus.ts';
import { RedisCommandBus } from '../../ingest/commands/redis-command-bus.ts';
import { LocalPositionFeed } from '../../ingest/position-feed/local-position-feed.ts';
import { RedisPositionFeed } from '../../ingest/position-feed/redis-position-feed.ts';
import { answerClusterMetrics } from '../../runtime/cluster-metrics.ts';
import type { Logger } from '../../runtime/logger.ts';
import { collectProcessMetrics } from '../../runtime/metrics.ts';
import { StartupError } from '../../runtime/startup-error.ts';
import { localBaseUrl } from '../commands/demo.ts';
import type { Config } from '../config.ts';
import type { RedisTarget } from '../../runtime/redis-client.ts';
import { connectRedisTarget, redisTargetOf } from '../redis-connection.ts';
import { startApiRole } from './api-role.ts';
import { startDemo } from './demo-role.ts';
import { openFirstRun } from './first-run.ts';
import { startEngineRole } from './engine-role.ts';
import { startIngestRole } from './ingest-role.ts';
import { startMetricsServer } from './metrics-server.ts';
import { ShutdownStack } from './shutdown-stack.ts';

export type Role = 'api' | 'ingest' | 'engine';
export const ROLES: readonly Role[] = ['api', 'ingest', 'engine'];

export interface RunningServer {
  url: string;
  port: number;
  /** Tracker protocols and the ports they listen on. */
  trackers: Array<{ protocol: string; port: number }>;
  database: DatabaseHandle;
  /** Lines for a new user: the demo's sign-in when this start seeded it, or the first account's setup link. */
  demo: string[] | undefined;
  /** The port of GET /metrics when METRICS_PORT gives it one of its own (in a cluster the primary holds it). */
  metricsPort: number | undefined;
  close(): Promise<void>;
}

/** Queues of one database: two deployments (or two test runs) sharing a Redis never see each other's jobs. */
function queuePrefix(databaseUrl: string | undefined): string {
  const name = databaseUrl ? new URL(databaseUrl).pathname.slice(1) || 'postgres' : 'embedded';
  return `fleetcore-${name}`;
}

/**
 * The prefix of the database's other keys (command routing, stream leases, sign-in limits). On a
 * Redis Cluster it is a hash tag, so the pipelines that renew many of them at once stay in one slot.
 */
function keyPrefix(databaseUrl: string | undefined, cluster: boolean): string {
  return cluster ? `{${queuePrefix(databaseUrl)}}` : queuePrefix(databaseUrl);
}

/**
 * Roles split over processes talk through the engine queue: without Redis each process would have a
 * queue of its own, and jobs added by one (signals from ingest, travel starts from the API) would
 * wait for a worker that never comes.
 */
export function checkRoles(roles: ReadonlySet<Role>, redis: RedisTarget | string | undefined): void {
  if (roles.size < ROLES.length && !redis) {
    const missing = ROLES.filter((r) => !roles.has(r));
    throw new StartupError(
      `--roles ${[...roles].join(',')} needs REDIS_URL or REDIS_CLUSTER_NODES: the ${missing.join(' and ')} role${missing.length > 1 ? 's' : ''} in another process can only share the engine queue through Redis`,
    );
  }
}

async function migrate(database: DatabaseHandle, log: Logger): Promise<void> {
  try {
    const applied = await migrateToLatest(database.db);
    if (applied.length > 0) log.info('migrations applied', { applied });
  } catch (error) {
    if (error instanceof MigrationError) {
      const hint = /postgis/i.test(error.message) ? ' (install PostGIS: apt-get install postgresql-15-postgis-3)' : '';
      throw new StartupError(`${error.message}${hint}`);
    }
    throw error;
  }
}

/**
 * Opens the database, migrates it, and starts the roles asked for (all three by default): the
 * engine's workers, the tracker listeners (ingest), the API, and on a new embedded database the demo.
 * Each part registers its stop as it starts; closing, or a failure half-way, stops them in reverse.
 */
export async function startServer(config: Config, log: Logger, roles: ReadonlySet<Role> = new Set(ROLES)): Promise<RunningServer> {
  const redisTarget = redisTargetOf(config);
  checkRoles(roles, redisTarget);
  const stack = new ShutdownStack(log);
  collectProcessMetrics();
  answerClusterMetrics();
  try {
    // In a cluster the primary serves METRICS_PORT for every process; alone, this process does.
    const metrics = config.metricsPort !== undefined && !cluster.isWorker ? await startMetricsServer({ host: config.host, port: config.metricsPort, token: config.metricsToken }, log) : undefined;
    if (metrics) stack.push('metrics', metrics.stop);
    // Redis first: one that cannot hold the queues is refused before the database is opened or migrated.
    const redis = redisTarget ? await connectRedisTarget(redisTarget) : undefined;
    if (redis) stack.push('redis', async () => redis.disconnect());
    const keys = keyPrefix(config.databaseUrl, 'cluster' in (redisTarget ?? {}));
    const database = await openDatabase({
      databaseUrl: config.databaseUrl, dataDir: config.dataDir, embedded: 'own',
      poolMode: config.databasePoolMode, listenDatabaseUrl: config.listenDatabaseUrl,
      // Only the API reads what may be stale; the engine and ingest read their own writes.
      ...(roles.has('api') ? { readDatabaseUrl: config.readDatabaseUrl, readReplicaMaxLagMs: config.readReplicaMaxLagMs } : {}),
    });
    stack.push('database', () => database.close());
    for (const warning of database.warnings) log.warn(warning);
    await migrate(database, log);

    const queues = redisTarget
      ? bullmqQueues(redisTarget, {
          prefix: queuePrefix(config.databaseUrl),
          onScheduleRestored: (queue, job) => log.warn('Redis had lost a schedule (restarted empty?); made it again', { queue, job }),
        })
      : inProcessQueues();
    stack.push('queues', () => queues.close());
    // Every process opens all the engine queues: ingest signals each, and their depth, their health
    // and (on a cluster) each one's master are watched from any process.
    const engineQueues = new EngineQueues(queues, config.engine.queues);
    const engineQueue = engineQueues.first;
    const unexportMetrics = [
      ...engineQueues.all.map((q) => exportQueueDepth(q)), exportQueueDepth(queues.queue(WEBHOOKS_QUEUE)),
      exportQueueUp(queues, [...engineQueues.all.map((q) => q.name), WEBHOOKS_QUEUE]),
    ];
    stack.push('queue metrics', async () => unexportMetrics.forEach((unexport) => unexport()));
    // Commands reach the process holding the device's connection: through Redis when processes may differ.
    const commandBus: CommandBus = redis ? new RedisCommandBus(redis, log, { prefix: keys }) : new InProcessCommandBus();
    stack.push('command bus', () => commandBus.close());
    // Committed fixes (vehicle.position) reach the streams of every API process: through Redis when processes may differ.
    const positionFeed = redis ? new RedisPositionFeed(redis, log, `${keys}:positions`) : new LocalPositionFeed();
    if (positionFeed instanceof RedisPositionFeed) stack.push('position feed', async () => positionFeed.close());

    const engine = roles.has('engine') ? await startEngineRole(config, log, { database, queues }) : undefined;
    if (engine) stack.push('engine', engine.stop);
    // With the engine in this process, it takes the fixes ingest commits from memory instead of reading them back.
    const ingest = roles.has('ingest')
      ? await startIngestRole(config, log, { database, engineQueues, commandBus, positionFeed, ...(engine ? { fixesCommitted: engine.fixesCommitted } : {}) })
      : undefined;
    if (ingest) stack.push('ingest', ingest.stop);
    let api;
    if (roles.has('api')) {
      const limiter = (limit: { max: number; windowMs: number }, prefix: string) =>
        redis ? createRedisRateLimiter(redis, limit.max, limit.windowMs, prefix) : createMemoryRateLimiter(limit.max, limit.windowMs);
      const rateLimiter = limiter(config.rateLimit, 'fleetcore:ratelimit:');
      const overviewRateLimiter = limiter(config.overviewRateLimit, 'fleetcore:ratelimit:overview:');
      // Per database, as the queues: deployments (and test runs) sharing a Redis do not count each other's failures.
      const authFailureLimiter = limiter({ max: config.access.authFailureLimit, windowMs: 60_000 }, `${keys}:auth-failures:`);
      const oauthTokenLimiter = limiter({ max: config.access.oauthTokenRateLimit, windowMs: 60_000 }, `${keys}:oauth-tokens:`);
      const signInFailureLimiter = limiter({ max: config.access.signInFailureLimit, windowMs: 60_000 }, `${keys}:sign-in-failures:`);
      stack.push('rate limiters', async () => {
        await rateLimiter.close();
        await overviewRateLimiter.close();
        await authFailureLimiter.close();
        await oauthTokenLimiter.close();
        await signInFailureLimiter.close();
      });
      // Open event streams per credential, counted over every API process of the database; released at stop.
      const streamLeases = redis ? new RedisStreamLeases(redis, log, { prefix: `${keys}:event-streams:` }) : undefined;
      if (streamLeases) stack.push('event stream leases', () => streamLeases.close());
      api = await startApiRole(config, log, {
        database, rateLimiter, overviewRateLimiter, authFailureLimiter, oauthTokenLimiter, signInFailureLimiter, streamLeases, metricsOnApiPort: config.metricsPort === undefined, engineQueue, webhookQueue: queues.queue(WEBHOOKS_QUEUE), queueHealth: () => queues.health(), commandBus, positionFeed,
      });
      stack.push('api', api.stop);
    }
    const url = api?.url ?? localBaseUrl({ ...config, port: 0 });
    const trackers = ingest?.trackers ?? [];
    const demo = await startDemo(config, log, { database, apiUrl: url, teltonikaPort: trackers.find((t) => t.protocol === 'teltonika')?.port });
    stack.push('demo fleet', demo.stop);
    const welcome = demo.instructions ?? (api ? await openFirstRun(database.db, config.access.publicUrl ?? url) : undefined);

    return { url, port: api?.port ?? 0, trackers, database, demo: welcome, metricsPort: metrics?.port, close: () => stack.stopAll() };
  } catch (error) {
    await stack.stopAll();
    throw error;
  }
}
