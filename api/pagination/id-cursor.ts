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

/**
 * A list page's answer from `limit + 1` rows ordered by id: the first `limit` as views, whether more
 * follow, and the cursor that continues after the last one.
 */
export function idPage<Row extends { id: number | string }, View>(list: string, rows: Row[], limit: number, view: (row: Row) => View) {
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { data: page.map(view), has_more: hasMore, next_cursor: hasMore ? encodeIdCursor(list, String(page[page.length - 1]!.id)) : null };
}
