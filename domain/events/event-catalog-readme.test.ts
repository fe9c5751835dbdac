import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES } from './event-catalog.ts';

// docs/events.md is where integrators read the catalog: a kind added here without its entry there fails.
describe('the event catalog in docs/events.md', () => {
  const readme = readFileSync(resolve(import.meta.dirname, '../../docs/events.md'), 'utf8');
  it.each(EVENT_TYPES)('documents %s with a payload example', (type) => {
    const at = readme.indexOf(`#### \`${type}\``);
    expect(at).toBeGreaterThan(-1);
    const example = /```json\n(.+)\n```/.exec(readme.slice(at))!;
    expect(JSON.parse(example[1]!)).toMatchObject({ id: expect.any(String), type, timestamp: expect.any(String), data: expect.any(Object) });
  });
});
