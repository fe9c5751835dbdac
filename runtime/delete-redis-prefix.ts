import { createRedisClient, masters, type RedisTarget } from './redis-client.ts';

/** `prefix` as a SCAN MATCH pattern that matches it literally, even with glob characters in it. */
function literalPattern(prefix: string): string {
  return prefix.replace(/[*?[\]\\]/g, '\\$&');
}

/**
 * Deletes every key under `prefix:` in the Redis at `redis` (REDIS_URL, or a Redis Cluster): what
 * queues, leases and feeds named with that prefix leave behind once the processes that used them are
 * gone. On a cluster the same prefix is also a hash tag (`{prefix}:` and `{prefix:<queue>}:`), and
 * each master holds only its own slots' keys, so every master is scanned. SCAN walks the keyspace in
 * pages, so a large Redis is never blocked the way KEYS would block it.
 */
export async function deleteRedisPrefix(redis: string | RedisTarget, prefix: string): Promise<void> {
  const target = typeof redis === 'string' ? { url: redis } : redis;
  const client = createRedisClient(target, { lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => undefined); // a failed command rejects; the event would only repeat it
  const literal = literalPattern(prefix);
  const patterns = [`${literal}:*`, `\\{${literal}\\}:*`, `\\{${literal}:*`];
  try {
    await client.connect();
    for (const node of masters(client)) {
      for (const pattern of patterns) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
          cursor = next;
          // One DEL per key: on a cluster, keys of one node may still lie in different slots.
          if (keys.length > 0) {
            const pipeline = node.pipeline();
            for (const key of keys) pipeline.del(key);
            for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
          }
        } while (cursor !== '0');
      }
    }
  } finally {
    client.disconnect();
  }
}
