import { ApiError } from '../api-error.ts';

const MAX_LIST_ITEMS = 500;

/** A comma-separated query parameter as its distinct, trimmed values; undefined when absent, 400 when empty or too long. */
export function commaList(raw: string | undefined, name: string): string[] | undefined {
  if (raw === undefined) return undefined;
  const items = [...new Set(raw.split(',').map((s) => s.trim()).filter(Boolean))];
  if (items.length === 0) throw new ApiError(400, `${name} must list at least one value when given`);
  if (items.length > MAX_LIST_ITEMS) throw new ApiError(400, `${name} may list at most ${MAX_LIST_ITEMS} values`);
  return items;
}
