import { Redis } from 'ioredis';
import { redactUrl } from '../runtime/redact-url.ts';
import { StartupError } from '../runtime/startup-error.ts';

/** Connects to REDIS_URL and checks it answers, failing start with one clear line when it does not. */
export async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 5000, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined); // reconnects on its own; commands that fail meanwhile report it
  try {
    await redis.connect();
    await redis.ping();
    return redis;
  } catch (error) {
    redis.disconnect();
    throw new StartupError(`cannot connect to REDIS_URL ${redactUrl(url)}: ${(error as Error).message}`);
  }
}
