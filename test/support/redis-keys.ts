import { deleteRedisPrefix } from '../../runtime/delete-redis-prefix.ts';

/** Deletes the keys under `prefix` in REDIS_URL: what a test's queues leave behind. Nothing without Redis. */
export async function deleteRedisKeys(prefix: string): Promise<void> {
  if (process.env.REDIS_URL) await deleteRedisPrefix(process.env.REDIS_URL, prefix);
}
