import { createMiddleware } from 'hono/factory';
import type { Logger } from '../../runtime/logger.ts';
import { ApiError } from '../api-error.ts';
import { httpMetrics } from '../http-metrics.ts';
import type { AppEnv } from '../app-env.ts';
import { endpointClass, type EndpointClass } from './endpoint-class.ts';
import type { RateLimiter } from './rate-limiter.ts';

/**
 * Counts each request against its API key (or OAuth client) in the limiter of its endpoint class and sets the
 * RateLimit headers of that limit on every response. A stream counts once, when it opens.
 */
export function rateLimit(limiters: Record<EndpointClass, RateLimiter>, apiPrefix: string, log: Logger) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const path = c.req.path.startsWith(apiPrefix) ? c.req.path.slice(apiPrefix.length) : c.req.path;
    const limit = endpointClass(c.req.method, path);
    const limiter = limiters[limit];
    let decision;
    try {
      decision = await limiter.hit(c.get('principal').rateKey);
    } catch (error) {
      // A limiter outage should not take the API down with it.
      (c.get('log') ?? log).warn('rate limiter unavailable; request let through', { error: (error as Error).message });
      return next();
    }
    const headers = {
      'RateLimit-Limit': String(decision.limit),
      'RateLimit-Remaining': String(decision.remaining),
      'RateLimit-Reset': String(decision.resetSeconds),
    };
    if (!decision.allowed) {
      httpMetrics.rateLimitRefusals.inc({ limit });
      throw new ApiError(429, `Rate limit exceeded: ${decision.limit} requests per window; retry in ${decision.resetSeconds} s`, {
        ...headers,
        'Retry-After': String(decision.resetSeconds),
      });
    }
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  });
}
