import { Redis } from 'ioredis';
import { redactUrl } from '../runtime/redact-url.ts';
import { StartupError } from '../runtime/startup-error.ts';
import { parseRedisInfo, redisServerProblem } from './redis-server-check.ts';

/**
 * Connects to REDIS_URL, checks it answers and that it is a Redis the queues can live on (see
 * redisServerProblem), failing start with one clear line when it is not.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 5000, maxRetriesPerRequest: 1 });
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
