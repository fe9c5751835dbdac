import { describe, expect, it } from 'vitest';
import { signalFromCsq, signalFromLevel } from './device-signal.ts';

describe('signalFromLevel', () => {
  it.each([
    ['Teltonika IO 21, 0–5', 5, [0, 1, 2, 3, 4, 5], [0, 6, 12, 19, 25, 31]],
    ['Concox GSM level, 0–4', 4, [0, 1, 2, 3, 4], [0, 8, 16, 23, 31]],
  ] as const)('spreads %s over 0–31', (_, top, levels, expected) => {
    expect(levels.map((level) => signalFromLevel(level, top))).toEqual(expected);
  });

  it.each([
    ['above the top', 6, 5],
    ['negative', -1, 5],
    ['fractional', 2.5, 5],
    ['a scale without levels', 0, 0],
  ])('refuses a level %s', (_, level, top) => {
    expect(signalFromLevel(level, top)).toBeUndefined();
  });
});

describe('signalFromCsq', () => {
  it.each([
    [0, 0],
    [17, 17],
    [31, 31],
    [99, undefined], // the modem does not know
    [32, undefined],
    [-1, undefined],
    [12.5, undefined],
  ])('CSQ %s is %s', (csq, expected) => {
    expect(signalFromCsq(csq)).toBe(expected);
  });
});
