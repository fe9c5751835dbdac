import { UsageError } from './usage-error.ts';

/** `--expires`: `30d`, `12h` or an ISO date-time, which must lie in the future. */
export function parseExpiry(raw: string, now = new Date()): Date {
  const relative = /^(\d{1,5})([dh])$/.exec(raw);
  const expires = relative
    ? new Date(now.getTime() + Number(relative[1]) * (relative[2] === 'd' ? 86_400_000 : 3_600_000))
    : new Date(/^\d{4}-\d{2}-\d{2}/.test(raw) ? raw : Number.NaN);
  if (Number.isNaN(expires.getTime())) {
    throw new UsageError(`--expires must be like 30d, 12h or an ISO date-time, got "${raw}"`);
  }
  if (expires <= now) throw new UsageError(`--expires ${raw} is not in the future`);
  return expires;
}
