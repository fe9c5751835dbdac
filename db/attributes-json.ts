import type { StoredFix } from '../domain/stored-rows.ts';

const texts = new WeakMap<StoredFix, string>();

/**
 * A fix's attributes as JSON text, made once however many statements of its batch write them (its
 * history row and its device's latest state): on a busy server this text is the largest thing made
 * per fix.
 */
export function attributesJson(fix: StoredFix): string {
  let text = texts.get(fix);
  if (text === undefined) texts.set(fix, (text = JSON.stringify(fix.attributes ?? {})));
  return text;
}
