import { createHash } from 'node:crypto';
import { ApiError } from '../api-error.ts';

/** Where a page of a list ordered by (name, id) ended: the next page starts strictly after it. */
export interface NamePosition {
  name: string;
  id: string;
}

/**
 * What a cursor is bound to besides its list: who paged (`owner`, e.g. the user and mode: another
 * user's list is another list) and the filters the page was read with (the same position under other
 * filters would silently skip or repeat rows).
 */
export interface CursorContext {
  owner: string;
  filters: Record<string, string | readonly string[] | undefined>;
}

/** Names are at most 200 characters; JSON may spell each as `\uXXXX`; base64 adds a third. */
const MAX_CURSOR_CHARS = 2_048;

const digest = (text: string, chars: number) => createHash('sha256').update(text).digest('base64url').slice(0, chars);

/** The filters in one spelling: keys sorted, lists sorted, absent ones null. */
function filtersTag(filters: CursorContext['filters']): string {
  const canonical = Object.keys(filters)
    .sort()
    .map((k) => {
      const v = filters[k];
      return [k, v === undefined ? null : typeof v === 'string' ? v : [...v].sort()];
    });
  return digest(JSON.stringify(canonical), 12);
}

/**
 * The opaque `cursor` of a list ordered by (name, id): base64url of the list's name, its owner and
 * filters (as digests), the last (name, id) returned, and a checksum, so a cursor damaged or edited
 * in transit is refused rather than read as another position. It holds no server state: any API
 * process reading the same database continues the same paging.
 */
export function encodeNameCursor(list: string, context: CursorContext, last: NamePosition): string {
  const fields = [list, digest(context.owner, 12), filtersTag(context.filters), last.name, last.id];
  return Buffer.from(JSON.stringify([...fields, digest(JSON.stringify(fields), 8)])).toString('base64url');
}

/**
 * The position a cursor of `list` holds; 400 for one damaged or edited, made for another list or
 * owner, or made under other filters. `validId` says whether an id is one the list can hold.
 */
export function decodeNameCursor(list: string, context: CursorContext, cursor: string, validId: (id: string) => boolean): NamePosition {
  const refused = (why = 'cursor is not one this list returned; start again without it') => new ApiError(400, why);
  if (cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw refused();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw refused();
  }
  if (!Array.isArray(parsed) || parsed.length !== 6 || !parsed.every((p) => typeof p === 'string')) throw refused();
  const fields = parsed.slice(0, 5) as string[];
  const [madeFor, owner, filters, name, id] = fields as [string, string, string, string, string];
  if (parsed[5] !== digest(JSON.stringify(fields), 8)) throw refused();
  if (madeFor !== list || owner !== digest(context.owner, 12)) throw refused();
  if (name.length < 1 || name.length > 200 || name.includes('\u0000') || !validId(id)) throw refused();
  if (filters !== filtersTag(context.filters)) throw refused('cursor was made with other filters; pass the same filters with it, or start again without it');
  return { name, id };
}
