import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { redactUrl } from './redact-url.ts';

/** A standalone Redis or a Redis Cluster: ioredis gives both the commands fleetcore uses. */
export type RedisClient = Redis | Cluster;

/** REDIS_CLUSTER_NODES (and REDIS_PASSWORD): the nodes a cluster client starts from; it learns the rest. */
export interface RedisClusterSettings {
  nodes: Array<{ host: string; port: number }>;
  password: string | undefined;
}

/** Where fleetcore's Redis is: REDIS_URL, or the nodes of a Redis Cluster. */
export type RedisTarget = { url: string } | { cluster: RedisClusterSettings };

/** The target in words safe to print: the URL without its password, or the cluster's nodes. */
export function describeRedisTarget(target: RedisTarget): string {
  if ('url' in target) return `REDIS_URL ${redactUrl(target.url)}`;
  return `REDIS_CLUSTER_NODES ${target.cluster.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
}

/**
 * A new client of `target` with `options` (for a cluster, the options of each node's connection).
 * The cluster client follows MOVED and ASK redirections and the slots' moves on a failover itself.
 */
export function createRedisClient(target: RedisTarget, options: RedisOptions = {}): RedisClient {
  if ('url' in target) return new Redis(target.url, options);
  const { lazyConnect, ...nodeOptions } = options;
  const password = target.cluster.password;
  return new Cluster(target.cluster.nodes, {
    ...(lazyConnect !== undefined ? { lazyConnect } : {}),
    redisOptions: { ...nodeOptions, ...(password ? { password } : {}) },
  });
}

/** Whether `client` talks to a Redis Cluster. */
export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

/** The standalone Redis, or every master of the cluster: where a SCAN must run to see every key. */
export function masters(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client];
}
