import { Redis } from 'ioredis';

/** `prefix` as a SCAN MATCH pattern that matches it literally, even with glob characters in it. */
function literalPattern(prefix: string): string {
  return prefix.replace(/[*?[\]\\]/g, '\\$&');
}

/**
 * Deletes every key under `prefix:` in the Redis at `redisUrl`: what queues, leases and feeds named
 * with that prefix leave behind once the processes that used them are gone. SCAN walks the keyspace
 * in pages, so a large Redis is never blocked the way KEYS would block it.
 */
export async function deleteRedisPrefix(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined); // a failed command rejects; the event would only repeat it
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${literalPattern(prefix)}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
