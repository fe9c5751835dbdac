import { ReplyError } from 'ioredis';
import type { RedisClient } from '../../runtime/redis-client.ts';
import type { QueueHealth } from './queue-health.ts';

/** ioredis states in which a command would only wait in its offline queue for a connection that is gone. */
const DISCONNECTED = new Set(['reconnecting', 'close', 'end']);

/**
 * What a Redis error means for the queues, in words safe to show anyone. Redis's own refusals name
 * the cause in their first word (a replica's READONLY, maxmemory's OOM, a failed save's MISCONF);
 * anything else (refused connection, timeout, closed socket) is Redis not answering.
 */
export function redisFailureReason(error: Error): string {
  if (!(error instanceof ReplyError)) return 'unreachable';
  const code = error.message.split(' ', 1)[0];
  if (code === 'READONLY') return 'read-only';
  if (code === 'OOM') return 'out of memory';
  return 'refusing writes';
}

/**
 * Whether the queues' Redis takes a write now: a SET of one short-lived key through the queues' own
 * connection, which fails as a job's add would (Redis down, demoted to a replica, out of memory,
 * unable to save). A PING would pass for all but the first. Answers within `timeoutMs` whatever Redis does.
 */
export async function redisQueueHealth(connection: RedisClient, key: string, timeoutMs: number): Promise<QueueHealth> {
  if (DISCONNECTED.has(connection.status)) return { up: false, reason: 'unreachable', detail: `Redis connection ${connection.status}` };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new Error(`Redis did not answer in ${timeoutMs} ms`)), timeoutMs);
  });
  const write = connection.set(key, String(Date.now()), 'PX', 60_000);
  write.catch(() => undefined); // still pending when the timeout wins
  try {
    await Promise.race([write, timeout]);
    return { up: true };
  } catch (error) {
    return { up: false, reason: redisFailureReason(error as Error), detail: (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}
