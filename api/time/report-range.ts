import { ApiError } from '../api-error.ts';
import { parseIsoLocal } from '../../domain/time/zoned-time.ts';

export const RANGE_BOTH_REQUIRED = 'Both from and to are required (ISO date or date-time, e.g. 2024-05-01 or 2024-05-01T08:30)';

/**
 * A report's `from`/`to` as instants: ISO dates or date-times read as wall clock in the user's
 * timezone, a date alone covering its whole day. Refused with 400 when unreadable, reversed or
 * longer than `maxDays`.
 */
export function reportRange(fromText: string, toText: string, timeZone: string, maxDays: number): { from: Date; to: Date } {
  const from = parseIsoLocal(fromText, timeZone, false);
  const to = parseIsoLocal(toText, timeZone, true);
  if (!from) throw new ApiError(400, `from "${fromText}" is not an ISO date or date-time (2024-05-01 or 2024-05-01T08:30)`);
  if (!to) throw new ApiError(400, `to "${toText}" is not an ISO date or date-time (2024-05-01 or 2024-05-01T08:30)`);
  if (from.instant > to.instant) throw new ApiError(400, 'from must not be after to');
  if (to.instant.getTime() - from.instant.getTime() > maxDays * 86_400_000) throw new ApiError(400, `The range may span at most ${maxDays} days`);
  return { from: from.instant, to: to.instant };
}
