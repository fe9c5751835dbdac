export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the oldest counted request leaves the window, freeing a slot. */
  resetSeconds: number;
}

/** A sliding-window limit: at most `max` requests in any `windowMs`; refused requests are not counted. */
export interface RateLimiter {
  hit(key: string): Promise<RateLimitDecision>;
  /** The decision a hit would get now, counting nothing. */
  peek(key: string): Promise<RateLimitDecision>;
  close(): Promise<void>;
}
