import cluster from 'node:cluster';
import { createLogger } from '../../runtime/logger.ts';
import { StartupError } from '../../runtime/startup-error.ts';
import { parseCommand, positiveInteger } from '../command-line.ts';
import { connectRedisTarget, redisTargetOf } from '../redis-connection.ts';
import type { Config } from '../config.ts';
import { ROLES, startServer, type Role } from '../server/start-server.ts';
import { UsageError } from '../usage-error.ts';
import { runServeCluster } from './serve-cluster.ts';

export const serveUsage = 'fleet serve [--roles api,ingest,engine] [--processes N]';

export function parseRoles(raw: string | undefined): Set<Role> {
  if (raw === undefined) return new Set(ROLES);
  const roles = raw.split(',').map((r) => r.trim()).filter(Boolean);
  const unknown = roles.filter((r) => !ROLES.includes(r as Role));
  if (unknown.length > 0 || roles.length === 0) throw new UsageError(`--roles takes a comma-separated list of ${ROLES.join(', ')}; got "${raw}"`);
  return new Set(roles as Role[]);
}

export async function serveCommand(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, { roles: { type: 'string' }, processes: { type: 'string' } });
  const roles = parseRoles(typeof parsed.values.roles === 'string' ? parsed.values.roles : undefined);
  const processes = typeof parsed.values.processes === 'string' ? positiveInteger(parsed.values.processes, '--processes') : 1;
  const log = createLogger(config.logLevel);
  if (processes > 1 && cluster.isPrimary) {
    // The embedded database and the in-process queue live inside one process; copies need the servers.
    const redis = redisTargetOf(config);
    if (!config.databaseUrl || !redis) throw new StartupError('--processes needs DATABASE_URL and REDIS_URL (or REDIS_CLUSTER_NODES): the embedded database and queue cannot be shared');
    // Checked once here: a Redis every copy would refuse is one line, not a copy refused and restarted forever.
    (await connectRedisTarget(redis)).disconnect();
    return runServeCluster(processes, log, { host: config.host, port: config.metricsPort, token: config.metricsToken });
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
