import type { RedisClusterSettings } from '../runtime/redis-client.ts';
import { StartupError } from '../runtime/startup-error.ts';

type Env = Record<string, string | undefined>;

const EXAMPLE = 'e.g. 10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379';

/** One `host:port` entry; an IPv6 host in brackets (`[::1]:6379`). */
function node(entry: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:\s[\]]+)):(\d+)$/.exec(entry);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port < 1 || port > 65535) throw new StartupError(`REDIS_CLUSTER_NODES takes host:port entries, comma-separated (${EXAMPLE}); got "${entry}"`);
  return { host: match[1] ?? match[2]!, port };
}

/**
 * REDIS_CLUSTER_NODES and REDIS_PASSWORD: a Redis Cluster instead of REDIS_URL. A few nodes are
 * enough; the client learns the others from them. Both it and REDIS_URL set is refused: which one
 * was meant cannot be guessed, and guessing wrong splits the queues over two Redis.
 */
export function redisClusterSettings(env: Env): RedisClusterSettings | undefined {
  const raw = (env.REDIS_CLUSTER_NODES ?? '').trim();
  const password = env.REDIS_PASSWORD || undefined;
  if (raw === '') {
    if (password) throw new StartupError('REDIS_PASSWORD is set without REDIS_CLUSTER_NODES; with REDIS_URL, put the password in the URL');
    return undefined;
  }
  if (env.REDIS_URL) throw new StartupError('REDIS_URL and REDIS_CLUSTER_NODES are both set; set REDIS_URL for a standalone Redis or REDIS_CLUSTER_NODES for a Redis Cluster, not both');
  return { nodes: raw.split(',').map((e) => e.trim()).filter(Boolean).map(node), password };
}
