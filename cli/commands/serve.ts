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
import { parseCommand } from '../command-line.ts';
import type { Config } from '../config.ts';
import { DEMO_EMAIL, demoInstructions, seedDemo } from '../demo-seed.ts';
import { startDemoFleet } from '../../simulators/demo-fleet.ts';
import { createLogger, type Logger } from '../logger.ts';
import { connectRedis } from '../redis-connection.ts';
import { StartupError } from '../startup-error.ts';
import { startIngest } from '../../ingest/start-ingest.ts';
import { localBaseUrl } from './demo.ts';

export const serveUsage = 'fleet serve';

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

/** Opens the database, migrates it, seeds the demo on a new embedded database, and serves the API. */
export async function startServer(config: Config, log: Logger): Promise<RunningServer> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, embedded: 'own' });
  let redis: Redis | undefined;
  let rateLimiter: RateLimiter | undefined;
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
    const app = createApp({ db: database.db, log, rateLimiter, config });
    const server = createAdaptorServer({ fetch: app.fetch }) as Server;
    // Slow or stalled clients are cut off instead of holding sockets open.
    server.headersTimeout = 15_000;
    server.requestTimeout = 30_000;
    server.keepAliveTimeout = 5_000;
    const port = await listen(server, config.host, config.port);
    const url = localBaseUrl({ ...config, port });
    let ingest;
    try {
      ingest = await startIngest(database, log, {
        host: config.host,
        ports: config.trackerPorts,
        osmandPort: config.osmandPort,
        limits: { idleTimeoutMs: config.ingest.idleTimeoutMs, maxBufferedBytes: config.ingest.maxBufferedBytes },
        batchRows: config.ingest.batchRows,
        batchDelayMs: config.ingest.batchDelayMs,
        onDevicesUpdated: (deviceIds) => log.debug('positions committed', { devices: deviceIds.length }),
      });
    } catch (error) {
      server.close();
      throw error;
    }
    const trackers = ingest.listeners.map((l) => ({ protocol: l.protocol, port: l.port }));

    let demo: string[] | undefined;
    if (await shouldSeedDemo(config, database)) demo = demoInstructions(await seedDemo(database.db), url);
    const teltonikaPort = trackers.find((t) => t.protocol === 'teltonika')?.port;
    const simulateDemo = config.demoSimulate === 'true' || (config.demoSimulate === 'auto' && database.kind === 'embedded');
    const demoFleet = simulateDemo && teltonikaPort ? await startDemoFleet(database.db, DEMO_EMAIL, teltonikaPort) : undefined;
    if (demoFleet) log.info('demo vehicles are driving (simulated Teltonika trackers); DEMO_SIMULATE=false stops that');

    const limiter = rateLimiter;
    const connection = redis;
    const running = ingest;
    return {
      url,
      port,
      trackers,
      database,
      demo,
      async close() {
        // Trackers first: batches in flight commit and are acknowledged before the database closes.
        await demoFleet?.stop();
        await running.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 5_000).unref();
        });
        await limiter.close();
        connection?.disconnect();
        await database.close();
      },
    };
  } catch (error) {
    await rateLimiter?.close();
    redis?.disconnect();
    await database.close();
    throw error;
  }
}

export async function serveCommand(config: Config, argv: string[]): Promise<void> {
  parseCommand(argv, {});
  const log = createLogger(config.logLevel);
  const running = await startServer(config, log);
  process.stdout.write(`fleet: API listening on ${running.url} (reference: ${running.url}/docs); database: ${running.database.description}\n`);
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
