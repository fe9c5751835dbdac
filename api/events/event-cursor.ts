import { ApiError } from '../api-error.ts';

export type EventOrder = 'asc' | 'desc';

/**
 * The opaque `cursor` of event pages: the order it was made for and the last id returned. Ids are in
 * commit order, so the next page, "after" (or "before") that id, repeats nothing and skips nothing,
 * however many events arrive meanwhile.
 */
export function encodeEventCursor(order: EventOrder, lastId: string): string {
  return Buffer.from(`e1:${order}:${lastId}`).toString('base64url');
}

export function decodeEventCursor(cursor: string, order: EventOrder): string {
  const text = /^[A-Za-z0-9_-]{1,100}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString() : '';
  const m = /^e1:(asc|desc):(\d{1,19})$/.exec(text);
  if (!m) throw new ApiError(400, 'cursor is not one this API returned; start again without it');
  if (m[1] !== order) throw new ApiError(400, `cursor was made for order=${m[1]}; pass the same order with it`);
  return m[2]!;
}
