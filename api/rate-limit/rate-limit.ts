import { createMiddleware } from 'hono/factory';
import type { Logger } from '../../runtime/logger.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import type { RateLimiter } from './rate-limiter.ts';

/** Counts each request against its API key and sets the RateLimit headers on every response. */
export function rateLimit(limiter: RateLimiter, log: Logger) {
  return createMiddleware<AppEnv>(async (c, next) => {
    let decision;
    try {
      decision = await limiter.hit(c.get('principal').keyHash);
    } catch (error) {
      // A limiter outage should not take the API down with it.
      log.warn('rate limiter unavailable; request let through', { error: (error as Error).message });
      return next();
    }
    const headers = {
      'RateLimit-Limit': String(decision.limit),
      'RateLimit-Remaining': String(decision.remaining),
      'RateLimit-Reset': String(decision.resetSeconds),
    };
    if (!decision.allowed) {
      throw new ApiError(429, `Rate limit exceeded: ${decision.limit} requests per window; retry in ${decision.resetSeconds} s`, {
        ...headers,
        'Retry-After': String(decision.resetSeconds),
      });
    }
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  });
}
