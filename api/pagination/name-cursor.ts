import { createHash } from 'node:crypto';
import { ApiError } from '../api-error.ts';

/** Where a page of a list ordered by (name, id) ended: the next page starts strictly after it. */
export interface NamePosition {
  name: string;
  id: string;
}

/** Names are at most 200 characters; JSON may spell each as `\uXXXX`; base64 adds a third. */
const MAX_CURSOR_CHARS = 2_048;

/**
 * A short fingerprint of the filters a page was read with, so a cursor is only taken back with the
 * filters that made it: the same cursor under other filters would silently skip or repeat rows.
 */
export function filterTag(filters: Record<string, string | readonly string[] | undefined>): string {
  const canonical = Object.keys(filters)
    .sort()
    .map((k) => {
      const v = filters[k];
      return [k, v === undefined ? null : typeof v === 'string' ? v : [...v].sort()];
    });
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url').slice(0, 12);
}

/**
 * The opaque `cursor` of a list ordered by (name, id): the list it belongs to, the filters it was made
 * under and the last (name, id) returned, base64url. It holds no server state, so any API process
 * reading the same database continues the same paging.
 */
export function encodeNameCursor(list: string, tag: string, last: NamePosition): string {
  return Buffer.from(JSON.stringify([list, tag, last.name, last.id])).toString('base64url');
}

/**
 * The position a cursor of `list` holds; 400 for one tampered with, from another list, or made under
 * other filters. `validId` says whether an id is one the list can hold.
 */
export function decodeNameCursor(list: string, tag: string, cursor: string, validId: (id: string) => boolean): NamePosition {
  const refused = (why = 'cursor is not one this list returned; start again without it') => new ApiError(400, why);
  if (cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw refused();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw refused();
  }
  if (!Array.isArray(parsed) || parsed.length !== 4 || !parsed.every((p) => typeof p === 'string')) throw refused();
  const [madeFor, madeUnder, name, id] = parsed as [string, string, string, string];
  if (madeFor !== list) throw refused();
  if (name.length < 1 || name.length > 200 || name.includes('\u0000') || !validId(id)) throw refused();
  if (madeUnder !== tag) throw refused('cursor was made with other filters; pass the same filters with it, or start again without it');
  return { name, id };
}
