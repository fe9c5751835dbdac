import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../../runtime/redis-client.ts';
import type { RateLimitDecision, RateLimiter } from './rate-limiter.ts';

// One round trip, atomic, on Redis's own clock so API processes on different hosts agree on the window.
const SLIDING_WINDOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local allowed = 0
if count < max then
  allowed = 1
  if ARGV[4] == '1' then
    redis.call('ZADD', KEYS[1], now, ARGV[3])
    count = count + 1
  end
end
redis.call('PEXPIRE', KEYS[1], window)
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local first = now
if oldest[2] then first = tonumber(oldest[2]) end
return {allowed, count, first + window - now}
`;

/** Shares each key's window across every API process that uses the same Redis. */
export function createRedisRateLimiter(redis: RedisClient, max: number, windowMs: number, prefix = 'fleetcore:ratelimit:'): RateLimiter {
  const decide = async (key: string, count: boolean): Promise<RateLimitDecision> => {
    const [allowed, counted, msUntilFree] = (await redis.eval(SLIDING_WINDOW, 1, prefix + key, windowMs, max, randomUUID(), count ? '1' : '0')) as [
      number,
      number,
      number,
    ];
    return {
      allowed: allowed === 1,
      limit: max,
      remaining: Math.max(0, max - counted),
      resetSeconds: Math.max(1, Math.ceil(msUntilFree / 1000)),
    };
  };
  return {
    hit: (key: string) => decide(key, true),
    peek: (key: string) => decide(key, false),
    async close() {},
  };
}
