import { ApiError } from '../api-error.ts';

export interface PositionCursor {
  deviceId: number;
  from: Date;
  to: Date;
  /** The fix time of the last fix returned: the next page starts strictly after it. */
  after: Date;
}

/**
 * The opaque `cursor` of position pages: the vehicle and range it was made for, and the last fix time
 * returned, base64url. Fix times are written from JavaScript dates, so whole milliseconds: "after
 * this millisecond" repeats and skips nothing. A fix stored later behind the cursor is not seen by
 * that paging (keyset), as it would not have been had it arrived after the last page.
 */
export function encodePositionCursor(c: PositionCursor): string {
  return Buffer.from(`p1:${c.deviceId}:${c.from.getTime()}:${c.to.getTime()}:${c.after.getTime()}`).toString('base64url');
}

const REFUSED = 'cursor is not one this list returned; start again without it';

/**
 * The cursor of `deviceId`'s pages, refused with 400 when tampered with (its position outside its
 * range, or a range longer than `maxSpanMs`) or made for another vehicle.
 */
export function decodePositionCursor(cursor: string, deviceId: number, maxSpanMs: number): PositionCursor {
  const text = /^[A-Za-z0-9_-]{1,120}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString() : '';
  // At most 15 digits: every such millisecond count is a valid date.
  const m = /^p1:(\d{1,10}):(\d{1,15}):(\d{1,15}):(\d{1,15})$/.exec(text);
  if (!m) throw new ApiError(400, REFUSED);
  const [from, to, after] = [m[2], m[3], m[4]].map((ms) => new Date(Number(ms)));
  if (Number(m[1]) !== deviceId) throw new ApiError(400, 'cursor was made for another vehicle; start again without it');
  if (!(from! <= after! && after! <= to!) || to!.getTime() - from!.getTime() > maxSpanMs) throw new ApiError(400, REFUSED);
  return { deviceId, from: from!, to: to!, after: after! };
}
