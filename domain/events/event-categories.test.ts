import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVENT_CATEGORIES, EVENT_CATEGORY, EVENT_TYPES, eventTypesOfCategory } from './event-catalog.ts';

// The docs' table of categories is what integrators read to pick their kinds: it says what the catalog says.
describe('the six event categories', () => {
  const docs = readFileSync(resolve(import.meta.dirname, '../../docs/events.md'), 'utf8');
  const table = new Map<string, string[]>();
  for (const [, category, kinds] of docs.matchAll(/^\| (\w+) \| (`.+) \|$/gm)) {
    if ((EVENT_CATEGORIES as readonly string[]).includes(category!)) {
      table.set(category!, [...kinds!.replace(/\(.*\)/, '').matchAll(/`([a-z.]+)`/g)].map((m) => m[1]!));
    }
  }

  it.each(EVENT_CATEGORIES)('lists the kinds of %s in docs/events.md as the catalog does', (category) => {
    expect(table.get(category)?.slice().sort()).toEqual(eventTypesOfCategory(category).sort());
  });

  it('gives every kind but the webhook test ping a category, and each category a kind', () => {
    expect(EVENT_TYPES.filter((t) => EVENT_CATEGORY[t] === null)).toEqual(['webhook.test']);
    for (const category of EVENT_CATEGORIES) expect(eventTypesOfCategory(category).length).toBeGreaterThan(0);
  });
});
