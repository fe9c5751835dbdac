import { describe, expect, it } from 'vitest';

// The map's scripts are plain browser modules; describeEvent touches no DOM, so it runs here as it is.
const { describeEvent } = (await import(new URL('./static/event-list.js', import.meta.url).href)) as {
  describeEvent: (event: { type: string; data?: Record<string, unknown> }) => string;
};

describe('the event list', () => {
  it.each([
    ['a first status', { from: null, to: 'Moving' }, 'now Moving'],
    ['a change of status', { from: 'Stopped', to: 'Moving' }, 'Stopped → Moving'],
    ['a change to Inactive', { from: 'Moving', to: 'Inactive' }, 'Moving → Inactive'],
  ])('describes %s without a "null"', (_, data, text) => {
    const described = describeEvent({ type: 'vehicle.status.changed', data });
    expect(described).toBe(text);
    expect(described).not.toMatch(/null|undefined/);
  });
});
