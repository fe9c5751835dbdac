import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, EventTypePatternError, eventTypesMatching, matchesEventType, parseEventTypePatterns } from './event-catalog.ts';

describe('vehicle.position is opt-in', () => {
  it.each([
    [['*'], false],
    [['vehicle.*'], false],
    [['vehicle.geofence.*', 'vehicle.panic'], false],
    [['vehicle.position'], true],
    [['*', 'vehicle.position'], true],
    [['vehicle.*', 'vehicle.position'], true],
  ])('%j takes vehicle.position: %s', (names, taken) => {
    const patterns = parseEventTypePatterns(names);
    expect(matchesEventType(patterns, 'vehicle.position')).toBe(taken);
    expect(eventTypesMatching(patterns).includes('vehicle.position')).toBe(taken);
  });

  it('leaves every other kind to * and to its family', () => {
    expect(eventTypesMatching(parseEventTypePatterns(['*']))).toEqual(EVENT_TYPES.filter((t) => t !== 'vehicle.position'));
    expect(eventTypesMatching(parseEventTypePatterns(['vehicle.*']))).toEqual(EVENT_TYPES.filter((t) => t.startsWith('vehicle.') && t !== 'vehicle.position'));
    expect(eventTypesMatching(parseEventTypePatterns(['vehicle.position']))).toEqual(['vehicle.position']);
  });

  it('refuses a family that could only mean it, saying to name it', () => {
    for (const name of ['vehicle.position*', 'vehicle.pos*']) {
      expect(() => parseEventTypePatterns([name])).toThrow(EventTypePatternError);
      expect(() => parseEventTypePatterns([name])).toThrow(/name it exactly/);
    }
    expect(() => parseEventTypePatterns(['vehicle.p*'])).not.toThrow(); // vehicle.panic too
    expect(matchesEventType(parseEventTypePatterns(['vehicle.p*']), 'vehicle.position')).toBe(false);
  });
});
