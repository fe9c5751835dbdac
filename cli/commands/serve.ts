import { createAdaptorServer } from '@hono/node-server';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { createApp } from '../../api/app.ts';
import { createMemoryRateLimiter } from '../../api/rate-limit/memory-rate-limiter.ts';
import { createRedisRateLimiter } from '../../api/rate-limit/redis-rate-limiter.ts';
import type { RateLimiter } from '../../api/rate-limit/rate-limiter.ts';
import { countAccounts } from '../../db/accounts.ts';
import { openDatabase, type DatabaseHandle } from '../../db/database.ts';
import { MigrationError, migrateToLatest } from '../../db/migrator.ts';
import { parseCommand, positiveInteger } from '../command-line.ts';
import type { Config } from '../config.ts';
import { DEMO_EMAIL, demoInstructions, seedDemo } from '../demo-seed.ts';
import { startDemoFleet } from '../../simulators/demo-fleet.ts';
import { createLogger, type Logger } from '../logger.ts';
import { connectRedis } from '../redis-connection.ts';
import { StartupError } from '../startup-error.ts';
import { startIngest, type RunningIngest } from '../../ingest/start-ingest.ts';
import { DeviceSignals } from '../../engine/device-signals.ts';
import { bullmqQueues } from '../../engine/queue/bullmq-queues.ts';
import { inProcessQueues } from '../../engine/queue/in-process-queue.ts';
import type { QueueBackend } from '../../engine/queue/job-queue.ts';
import { ENGINE_QUEUE, scheduleTravelStart, startEngine, unscheduleTravelStart, type RunningEngine } from '../../engine/start-engine.ts';
import cluster from 'node:cluster';
import { UsageError } from '../usage-error.ts';
import { runServeCluster } from './serve-cluster.ts';
import { localBaseUrl } from './demo.ts';

export const serveUsage = 'fleet serve [--roles api,ingest,engine] [--processes N]';

export type Role = 'api' | 'ingest' | 'engine';
const ROLES: readonly Role[] = ['api', 'ingest', 'engine'];

export function parseRoles(raw: string | undefined): Set<Role> {
  if (raw === undefined) return new Set(ROLES);
  const roles = raw.split(',').map((r) => r.trim()).filter(Boolean);
  const unknown = roles.filter((r) => !ROLES.includes(r as Role));
  if (unknown.length > 0 || roles.length === 0) throw new UsageError(`--roles takes a comma-separated list of ${ROLES.join(', ')}; got "${raw}"`);
  return new Set(roles as Role[]);
}

/** Queues of one database: two deployments (or two test runs) sharing a Redis never see each other's jobs. */
function queuePrefix(databaseUrl: string | undefined): string {
  const name = databaseUrl ? new URL(databaseUrl).pathname.slice(1) || 'postgres' : 'embedded';
  return `fleetcore-${name}`;
}

export interface RunningServer {
  url: string;
  port: number;
  /** Tracker protocols and the ports they listen on. */
  trackers: Array<{ protocol: string; port: number }>;
  database: DatabaseHandle;
  /** Lines for a new user when this start seeded the demo data. */
  demo: string[] | undefined;
  close(): Promise<void>;
}

async function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(new StartupError(`port ${port} on ${host} is already in use; set PORT to a free port`));
      else if (error.code === 'EACCES') reject(new StartupError(`no permission to listen on ${host}:${port}; use a PORT above 1023`));
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') reject(new StartupError(`HOST ${host} is not an address of this machine`));
      else reject(error);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

async function shouldSeedDemo(config: Config, handle: DatabaseHandle): Promise<boolean> {
  if (config.demoSeed === 'false') return false;
  if (config.demoSeed === 'auto' && handle.kind !== 'embedded') return false;
  return (await countAccounts(handle.db)) === 0;
}

/**
 * Opens the database, migrates it, seeds the demo on a new embedded database, and runs the roles:
 * the API, the tracker listeners (ingest) and the engine's workers; all three by default.
 */
export async function startServer(config: Config, log: Logger, roles: Set<Role> = new Set(ROLES)): Promise<RunningServer> {
  if (!config.redisUrl && roles.size < ROLES.length && roles.has('engine') !== roles.has('ingest')) {
    throw new StartupError('ingest and engine in separate processes share their queue through Redis: set REDIS_URL');
  }
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, embedded: 'own' });
  let redis: Redis | undefined;
  let rateLimiter: RateLimiter | undefined;
  let queues: QueueBackend | undefined;
  try {
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
    if (config.redisUrl) {
      redis = await connectRedis(config.redisUrl);
      rateLimiter = createRedisRateLimiter(redis, config.rateLimit.max, config.rateLimit.windowMs);
    } else {
      rateLimiter = createMemoryRateLimiter(config.rateLimit.max, config.rateLimit.windowMs);
    }
    queues = config.redisUrl ? bullmqQueues(config.redisUrl, { prefix: queuePrefix(config.databaseUrl) }) : inProcessQueues();
    const engineQueue = queues.queue(ENGINE_QUEUE);
    const app = createApp({
      db: database.db, log, rateLimiter, config,
      travelSchedule: {
        scheduled: (travelId, startTime) => scheduleTravelStart(engineQueue, travelId, startTime),
        cancelled: (travelId) => unscheduleTravelStart(engineQueue, travelId),
      },
    });
    const server = createAdaptorServer({ fetch: app.fetch }) as Server;
    // Slow or stalled clients are cut off instead of holding sockets open.
    server.headersTimeout = 15_000;
    server.requestTimeout = 30_000;
    server.keepAliveTimeout = 5_000;
    const port = roles.has('api') ? await listen(server, config.host, config.port) : 0;
    const url = localBaseUrl({ ...config, port });
    const signals = new DeviceSignals(engineQueue, (error) => log.warn('could not signal the engine; its catch-up will', { error: error.message }));
    let ingest: RunningIngest | undefined;
    let engine: RunningEngine | undefined;
    try {
      if (roles.has('engine')) {
        engine = await startEngine(database, queues, log, {
          status: config.deviceStatus,
          eta: { roadFactor: config.engine.roadFactor, defaultSpeedKmh: config.engine.defaultSpeedKmh },
          etaRefreshMs: config.engine.etaRefreshMs,
          inactivitySweepMs: config.engine.inactivitySweepMs,
          geofencePollMs: config.engine.geofencePollMs,
          concurrency: config.engine.concurrency,
          fixesPerDevice: 1000,
          publishEvents: config.engine.publishEvents,
        });
      }
      if (roles.has('ingest')) ingest = await startIngest(database, log, {
        host: config.host,
        ports: config.trackerPorts,
        osmandPort: config.osmandPort,
        limits: { idleTimeoutMs: config.ingest.idleTimeoutMs, maxBufferedBytes: config.ingest.maxBufferedBytes },
        batchRows: config.ingest.batchRows,
        batchDelayMs: config.ingest.batchDelayMs,
        onDevicesUpdated: (deviceIds) => signals.add(deviceIds),
      });
    } catch (error) {
      server.close();
      await engine?.close();
      throw error;
    }
    const trackers = ingest?.listeners.map((l) => ({ protocol: l.protocol, port: l.port })) ?? [];

    let demo: string[] | undefined;
    if (await shouldSeedDemo(config, database)) demo = demoInstructions(await seedDemo(database.db), url);
    const teltonikaPort = trackers.find((t) => t.protocol === 'teltonika')?.port;
    const simulateDemo = config.demoSimulate === 'true' || (config.demoSimulate === 'auto' && database.kind === 'embedded');
    const demoFleet = simulateDemo && teltonikaPort ? await startDemoFleet(database.db, DEMO_EMAIL, teltonikaPort) : undefined;
    if (demoFleet) log.info('demo vehicles are driving (simulated Teltonika trackers); DEMO_SIMULATE=false stops that');

    const limiter = rateLimiter;
    const connection = redis;
    const running = ingest;
    const backend = queues;
    return {
      url,
      port,
      trackers,
      database,
      demo,
      async close() {
        // Trackers first: batches in flight commit and are acknowledged before the database closes.
        await demoFleet?.stop();
        await running?.close();
        await signals.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 5_000).unref();
        });
        await engine?.close();
        await backend.close();
        await limiter.close();
        connection?.disconnect();
        await database.close();
      },
    };
  } catch (error) {
    await queues?.close().catch(() => undefined);
    await rateLimiter?.close();
    redis?.disconnect();
    await database.close();
    throw error;
  }
}

export async function serveCommand(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, { roles: { type: 'string' }, processes: { type: 'string' } });
  const roles = parseRoles(typeof parsed.values.roles === 'string' ? parsed.values.roles : undefined);
  const processes = typeof parsed.values.processes === 'string' ? positiveInteger(parsed.values.processes, '--processes') : 1;
  const log = createLogger(config.logLevel);
  if (processes > 1 && cluster.isPrimary) {
    // The embedded database and the in-process queue live inside one process; copies need the servers.
    if (!config.databaseUrl || !config.redisUrl) throw new StartupError('--processes needs DATABASE_URL and REDIS_URL: the embedded database and queue cannot be shared');
    return runServeCluster(processes, log);
  }
  const running = await startServer(config, log, roles);
  if (roles.has('api')) {
    process.stdout.write(`fleet: API listening on ${running.url} (reference: ${running.url}/docs); database: ${running.database.description}\n`);
  } else {
    process.stdout.write(`fleet: running ${[...roles].join(', ')}; database: ${running.database.description}\n`);
  }
  if (running.trackers.length > 0) {
    process.stdout.write(`fleet: trackers on ${running.trackers.map((t) => `${t.protocol} ${t.port}`).join(', ')}\n`);
  }
  if (running.demo) process.stdout.write(`\n${running.demo.join('\n')}\n\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info('shutting down', { signal });
    running.close().then(
      () => process.exit(0),
      (error: Error) => {
        log.error('shutdown failed', { error: error.message });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
