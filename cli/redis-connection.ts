import { Redis, type Cluster } from 'ioredis';
import { createRedisClient, describeRedisTarget, type RedisClient, type RedisClusterSettings, type RedisTarget } from '../runtime/redis-client.ts';
import { redactUrl } from '../runtime/redact-url.ts';
import { StartupError } from '../runtime/startup-error.ts';
import { evictionProblem, parseRedisInfo, redisServerProblem } from './redis-server-check.ts';

/** How long a start waits for Redis (or every slot of a cluster) to answer before it is refused. */
const CONNECT_TIMEOUT_MS = 5000;

/**
 * Connects to REDIS_URL, checks it answers and that it is a Redis the queues can live on (see
 * redisServerProblem), failing start with one clear line when it is not.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: CONNECT_TIMEOUT_MS, maxRetriesPerRequest: 1 });
  // Reconnects on its own; commands that fail meanwhile report it. The socket's own error (ECONNREFUSED,
  // ENOTFOUND) says more than the "Connection is closed." that connect() rejects with, so it is kept.
  let socketError: Error | undefined;
  redis.on('error', (error: Error) => (socketError = error));
  let info: string;
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    throw new StartupError(`cannot connect to REDIS_URL ${redactUrl(url)}: ${socketError?.message || (error as Error).message}`);
  }
  try {
    // BullMQ reads INFO too when a queue opens, so a Redis that refuses it could not run the queues anyway.
    info = await redis.info();
  } catch (error) {
    redis.disconnect();
    throw new StartupError(`REDIS_URL ${redactUrl(url)} does not answer INFO, which the queues need: ${(error as Error).message}`);
  }
  const problem = redisServerProblem(parseRedisInfo(info), url);
  if (problem) {
    redis.disconnect();
    throw new StartupError(problem);
  }
  return redis;
}

/** Why a cluster's connect failed, in one line: ioredis hides the nodes' own errors behind "Failed to refresh slots cache". */
function clusterFailure(error: Error, nodeError: Error | undefined): string {
  const last = (error as Error & { lastNodeError?: Error }).lastNodeError ?? nodeError;
  return last && last.message !== error.message ? `${error.message} (${last.message})` : error.message;
}

/**
 * Connects to the Redis Cluster of REDIS_CLUSTER_NODES and checks it can hold the queues: it answers,
 * CLUSTER INFO says cluster_state:ok (every slot served), and no master evicts keys when full.
 * Otherwise start fails with one line.
 */
export async function connectRedisCluster(settings: RedisClusterSettings): Promise<Cluster> {
  const target = { cluster: settings };
  const named = describeRedisTarget(target);
  const cluster = createRedisClient(target, { lazyConnect: true, connectTimeout: CONNECT_TIMEOUT_MS, maxRetriesPerRequest: 1 }) as Cluster;
  let nodeError: Error | undefined;
  cluster.on('error', (error: Error) => (nodeError = error));
  const refuse = (line: string): never => {
    cluster.disconnect();
    throw new StartupError(line);
  };
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, fail) => {
      timer = setTimeout(() => fail(nodeError ?? new Error(`no answer in ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    });
    await Promise.race([cluster.connect(), timeout]);
  } catch (error) {
    refuse((await nodeProblem(settings, named)) ?? `cannot connect to ${named}: ${clusterFailure(error as Error, nodeError)}`);
  } finally {
    clearTimeout(timer);
  }
  try {
    const state = parseRedisInfo(String(await cluster.cluster('INFO'))).get('cluster_state');
    if (state !== 'ok') refuse(notOk(named, state));
    for (const master of cluster.nodes('master')) {
      const where = `the Redis Cluster master ${master.options.host}:${master.options.port}`;
      const problem = evictionProblem(parseRedisInfo(await master.info()), where);
      if (problem) refuse(problem);
    }
  } catch (error) {
    if (error instanceof StartupError) throw error;
    refuse(`${named} does not answer CLUSTER INFO or INFO, which the queues need: ${(error as Error).message}`);
  }
  return cluster;
}

function notOk(named: string, state: string | undefined): string {
  return `${named} is a Redis Cluster in cluster_state:${state ?? 'unknown'} (not every slot is served); fix the cluster (redis-cli --cluster check) before starting`;
}

/**
 * Why the cluster client could not get ready, asked of the first node that answers on its own: it is
 * no cluster node (REDIS_URL is for it), or its cluster does not serve every slot, which the client
 * waits out for ever. Undefined when no node answers, or the node sees nothing wrong.
 */
async function nodeProblem(settings: RedisClusterSettings, named: string): Promise<string | undefined> {
  for (const { host, port } of settings.nodes) {
    const node = new Redis(port, host, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null, enableReadyCheck: false, ...(settings.password ? { password: settings.password } : {}) });
    // A refused AUTH comes as an error event; connect() then rejects with only "Connection is closed.".
    let eventError: Error | undefined;
    node.on('error', (error: Error) => (eventError = error));
    try {
      await node.connect();
      const info = parseRedisInfo(await node.info('cluster'));
      if (info.get('cluster_enabled') !== '1') return `${named}: ${host}:${port} is a standalone Redis, not a Redis Cluster node; point REDIS_URL at it instead`;
      const state = parseRedisInfo(String(await node.cluster('INFO'))).get('cluster_state');
      return state === 'ok' ? undefined : notOk(named, state);
    } catch (error) {
      // A node that answers but refuses us speaks for the whole cluster: they share one password.
      const refusal = passwordProblem(error as Error, settings, named) ?? (eventError && passwordProblem(eventError, settings, named));
      if (refusal) return refusal;
      // Otherwise not this one: try the next node.
    } finally {
      node.disconnect();
    }
  }
  return undefined;
}

/** The line for a node that wants a password fleet did not give, or refused the one it gave (never shown). */
function passwordProblem(error: Error, settings: RedisClusterSettings, named: string): string | undefined {
  const code = /^(NOAUTH|WRONGPASS)\b/.exec(error.message)?.[1];
  if (!code) return undefined;
  if (code === 'NOAUTH' || !settings.password) return `${named} requires a password (${code}): set REDIS_PASSWORD`;
  return `${named} refused REDIS_PASSWORD (${code}): it is not the nodes' password`;
}

/** connectRedis or connectRedisCluster, whichever the target names. */
export function connectRedisTarget(target: RedisTarget): Promise<RedisClient> {
  return 'url' in target ? connectRedis(target.url) : connectRedisCluster(target.cluster);
}

/** REDIS_URL or REDIS_CLUSTER_NODES from the configuration; undefined when neither is set (the in-process queue). */
export function redisTargetOf(config: { redisUrl: string | undefined; redisCluster: RedisClusterSettings | undefined }): RedisTarget | undefined {
  if (config.redisCluster) return { cluster: config.redisCluster };
  return config.redisUrl ? { url: config.redisUrl } : undefined;
}
