/**
 * The Standard Webhooks retry schedule: the first attempt at once, then these waits after each
 * failure; after the last, the delivery is failed. About three days in all.
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 14 * 3_600_000, 20 * 3_600_000, 24 * 3_600_000,
];

/** A receiver's Retry-After is honoured up to this, so one answer cannot park a delivery for weeks. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * The wait before the next attempt after `attempts` failed ones, or undefined when none is left.
 * ±10 % jitter spreads retries of many deliveries that failed together; a Retry-After (from 429,
 * 502 or 504) is waited out when it asks for longer than the schedule.
 */
export function nextRetryDelay(attempts: number, delays: readonly number[], retryAfterMs?: number, random: () => number = Math.random): number | undefined {
  const base = delays[attempts - 1];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (0.9 + 0.2 * random()));
  return retryAfterMs === undefined ? jittered : Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** Retry-After as seconds or an HTTP date, in ms from `now`; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
