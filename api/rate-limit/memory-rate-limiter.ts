import type { RateLimitDecision, RateLimiter } from './rate-limiter.ts';

/** Keeps each key's request times in this process; right for a single API process. */
export function createMemoryRateLimiter(max: number, windowMs: number, now: () => number = Date.now): RateLimiter {
  const hits = new Map<string, number[]>();
  // Drop idle keys so the map does not grow with every key ever seen.
  const sweep = setInterval(() => {
    const horizon = now() - windowMs;
    for (const [key, times] of hits) if (times[times.length - 1]! <= horizon) hits.delete(key);
  }, windowMs);
  sweep.unref();

  const decide = (key: string, count: boolean): RateLimitDecision => {
    const t = now();
    const times = hits.get(key) ?? [];
    let expired = 0;
    while (expired < times.length && times[expired]! <= t - windowMs) expired++;
    if (expired > 0) times.splice(0, expired);
    const allowed = times.length < max;
    if (allowed && count) times.push(t);
    if (times.length > 0) hits.set(key, times);
    else hits.delete(key);
    const oldest = times[0] ?? t;
    return {
      allowed,
      limit: max,
      remaining: max - times.length,
      resetSeconds: Math.max(1, Math.ceil((oldest + windowMs - t) / 1000)),
    };
  };

  return {
    async hit(key: string): Promise<RateLimitDecision> {
      return decide(key, true);
    },
    async peek(key: string): Promise<RateLimitDecision> {
      return decide(key, false);
    },
    async close() {
      clearInterval(sweep);
    },
  };
}
