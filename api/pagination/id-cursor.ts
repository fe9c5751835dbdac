import { ApiError } from '../api-error.ts';

/**
 * The opaque `cursor` of a list ordered by id: the list it belongs to and the last id returned,
 * base64url. A cursor from another list, or tampered with, is refused rather than misread.
 */
export function encodeIdCursor(list: string, lastId: string): string {
  return Buffer.from(`${list}:${lastId}`).toString('base64url');
}

const BIGINT_MAX = 9_223_372_036_854_775_807n;

/** `maxId` is the largest id the list's column holds: a larger one would fail in the database, not here. */
export function decodeIdCursor(list: string, cursor: string, maxId = BIGINT_MAX): string {
  const text = /^[A-Za-z0-9_-]{1,100}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString() : '';
  const m = /^([a-z-]+):(\d{1,19})$/.exec(text);
  if (!m || m[1] !== list || BigInt(m[2]!) > maxId) throw new ApiError(400, 'cursor is not one this list returned; start again without it');
  return m[2]!;
}
