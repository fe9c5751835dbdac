import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { Logger } from '../../runtime/logger.ts';
import { clientAddress } from '../client-address.ts';
import { errorEnvelope } from '../envelope.ts';
import { httpMetrics } from '../http-metrics.ts';
import type { RateLimiter } from '../rate-limit/rate-limiter.ts';

/** An address that failed too often: what to answer instead of its 401. */
export interface Blocked {
  message: string;
  retryAfterSeconds: number;
}

/**
 * Guessing keys, tokens or client secrets is slowed per client address: each answer of 401 (a bad
 * key or token, a client that failed to authenticate) is counted, and once an address has
 * `AUTH_FAILURE_LIMIT` of them (20) in the last minute its failing requests are answered 429 with
 * Retry-After instead, until the oldest leaves the window. A valid credential is never refused: the
 * address may be a proxy or a NAT that colleagues share with whoever is guessing, and the credentials
 * are random beyond any guessing (190 bits and more); the limit is there to shed and flag the guesser.
 * With REDIS_URL the count is shared by every API process.
 */
export class FailedAuthenticationLimit {
  /**
   * `perAccount` counts failed sign-ins per email (SIGN_IN_FAILURE_LIMIT a minute), besides the
   * address's count; with REDIS_URL it too is shared by every API process.
   */
  constructor(
    private readonly limiter: RateLimiter,
    private readonly log: Logger,
    private readonly perAccount: RateLimiter = limiter,
  ) {}

  /**
   * Whether a sign-in must be refused before its password is even checked: its email or its address
   * is over its limit. Refused then whether the password is right or not, so guessing gains nothing.
   */
  async signInBlocked(c: Context, email: string): Promise<Blocked | undefined> {
    const address = clientAddress(c);
    try {
      const [account, from] = await Promise.all([
        this.perAccount.peek(`sign-in:${email}`),
        address ? this.limiter.peek(address) : undefined,
      ]);
      const over = !account.allowed ? account : from && !from.allowed ? from : undefined;
      if (!over) return undefined;
      httpMetrics.rateLimitRefusals.inc({ limit: 'authentication_failures' });
      return {
        message: `Too many failed sign-ins ${over === account ? 'for this account' : `from ${address}`}: retry in ${over.resetSeconds} s`,
        retryAfterSeconds: Math.max(1, over.resetSeconds),
      };
    } catch (error) {
      (c.get('log') ?? this.log).warn('failed-authentication limiter unavailable; sign-in not slowed', { error: (error as Error).message });
      return undefined;
    }
  }

  /** Counts a failed sign-in against its email and its address. */
  async signInFailed(c: Context, email: string): Promise<void> {
    const address = clientAddress(c);
    try {
      await Promise.all([this.perAccount.hit(`sign-in:${email}`), address ? this.limiter.hit(address) : undefined]);
    } catch (error) {
      (c.get('log') ?? this.log).warn('failed-authentication limiter unavailable; failed sign-in not counted', { error: (error as Error).message });
    }
  }

  /** Counts this request's 401 once it is answered, and turns it into 429 when its address is over the limit. */
  middleware() {
    return createMiddleware(async (c, next) => {
      await next();
      if (c.res.status !== 401) return;
      const blocked = await this.failed(c);
      if (blocked) c.res = c.json(errorEnvelope(blocked.message), 429, { 'Retry-After': String(blocked.retryAfterSeconds) });
    });
  }

  /** Counts a failed authentication of the request's address; says whether the address is over the limit. */
  async failed(c: Context): Promise<Blocked | undefined> {
    const address = clientAddress(c);
    if (!address) return undefined;
    let decision;
    try {
      // Counted while under the limit; past it, refused without being counted (the window frees on time).
      decision = await this.limiter.hit(address);
    } catch (error) {
      (c.get('log') ?? this.log).warn('failed-authentication limiter unavailable; 401 answered as it is', { error: (error as Error).message });
      return undefined;
    }
    if (decision.allowed) return undefined;
    httpMetrics.rateLimitRefusals.inc({ limit: 'authentication_failures' });
    return {
      message: `Too many failed authentications from ${address}: ${decision.limit} in a minute; retry in ${decision.resetSeconds} s (valid credentials are not affected)`,
      retryAfterSeconds: decision.resetSeconds,
    };
  }
}
