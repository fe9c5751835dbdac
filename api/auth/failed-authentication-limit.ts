import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { Logger } from '../../runtime/logger.ts';
import { ApiError } from '../api-error.ts';
import { clientAddress } from '../client-address.ts';
import { httpMetrics } from '../http-metrics.ts';
import type { RateLimiter } from '../rate-limit/rate-limiter.ts';

/**
 * Guessing keys, tokens or client secrets is slowed per client address: each answer of 401 (a bad
 * key or token, a client that failed to authenticate) is counted, and an address with
 * `AUTH_FAILURE_LIMIT` of them (20) in the last minute is answered 429 with Retry-After until the
 * oldest leaves the window, whatever it sends. With REDIS_URL the count is shared by every API process.
 */
export class FailedAuthenticationLimit {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly log: Logger,
  ) {}

  /** Refuses an address that failed too often; counts this request's 401 after it is answered. */
  middleware() {
    return createMiddleware(async (c, next) => {
      await this.refuseIfBlocked(c);
      await next();
      if (c.res.status === 401) await this.failed(c);
    });
  }

  /** The check alone, for endpoints that report their own failures (the OAuth ones). */
  async refuseIfBlocked(c: Context): Promise<void> {
    const address = clientAddress(c);
    if (!address) return;
    let decision;
    try {
      decision = await this.limiter.peek(address);
    } catch (error) {
      (c.get('log') ?? this.log).warn('failed-authentication limiter unavailable; request let through', { error: (error as Error).message });
      return;
    }
    if (!decision.allowed) {
      httpMetrics.rateLimitRefusals.inc({ limit: 'authentication_failures' });
      throw new ApiError(429, `Too many failed authentications from ${address}: ${decision.limit} in a minute; retry in ${decision.resetSeconds} s`, {
        'Retry-After': String(decision.resetSeconds),
      });
    }
  }

  async failed(c: Context): Promise<void> {
    const address = clientAddress(c);
    if (!address) return;
    await this.limiter.hit(address).catch((error: Error) => (c.get('log') ?? this.log).warn('could not count a failed authentication', { error: error.message }));
  }
}
