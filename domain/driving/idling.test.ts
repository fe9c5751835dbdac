import { describe, expect, it } from 'vitest';
import { detectIdling, EMPTY_IDLE_STATE, type IdleDecision, type IdleFix, type IdleState } from './idling.ts';

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
const SETTINGS = { minS: 300, movingSpeedKmh: 5, maxGapS: 3600 };

/** One fix per entry: [seconds after T0, speed km/h, ignition (null: not reported), valid]. */
const fixes = (rows: Array<[number, number, boolean | null, boolean?]>): IdleFix[] =>
  rows.map(([s, speedKmh, ignition, valid]) => ({
    fixTime: new Date(T0 + s * 1000), valid: valid ?? true, latitude: 19.4 + s * 1e-6, longitude: -99.1, speedKmh, heading: 0, ignition,
  }));

function run(input: IdleFix[], state: IdleState = EMPTY_IDLE_STATE, settings = SETTINGS) {
  const out: IdleDecision[] = [];
  const next = detectIdling(state, settings, input, out);
  const summary = out.map((d) => (d.kind === 'start' ? `start@${(d.since.t - T0) / 1000}` : `end@${(d.at.t - T0) / 1000}:${d.idleSeconds}s`));
  return { out, next, summary };
}

/** A still vehicle with the ignition on, a fix every 60 s from `from` to `to`. */
const idling = (from: number, to: number): Array<[number, number, boolean | null]> => {
  const rows: Array<[number, number, boolean | null]> = [];
  for (let s = from; s <= to; s += 60) rows.push([s, 0, true]);
  return rows;
};

describe('detectIdling', () => {
  it('starts once IDLE_MIN_S has passed, at the time idling began, and ends when the vehicle moves', () => {
    const r = run(fixes([[0, 40, true], ...idling(60, 600), [660, 30, true]]));
    expect(r.summary).toEqual(['start@60', 'end@660:600s']);
    expect(r.out[0]).toMatchObject({ kind: 'start', since: { lat: 19.4 + 60e-6 } });
  });

  it('decides nothing for an idling shorter than IDLE_MIN_S', () => {
    expect(run(fixes([[0, 40, true], ...idling(60, 300), [359, 30, true]])).summary).toEqual([]);
  });

  it('ends when the ignition goes off, and counts only with the ignition on', () => {
    expect(run(fixes([...idling(0, 420), [480, 0, false], [540, 0, false], [900, 0, false]])).summary).toEqual(['start@0', 'end@480:480s']);
    // Parked with the ignition off, or a tracker that never reports it: no idling.
    expect(run(fixes([[0, 0, false], [600, 0, null], [1200, 0, null]])).summary).toEqual([]);
    expect(run(fixes([[0, 0, null], [600, 0, null], [1200, 0, null]])).summary).toEqual([]);
  });

  it('keeps the last reported ignition for fixes that report none', () => {
    expect(run(fixes([[0, 0, true], [200, 0, null], [400, 0, null], [500, 20, null]])).summary).toEqual(['start@0', 'end@500:500s']);
  });

  it('logs start and end together when the idling is only known long once it ended (sparse fixes)', () => {
    expect(run(fixes([[0, 0, true], [900, 0, false]])).summary).toEqual(['start@0', 'end@900:900s']);
  });

  it('ends at the last fix before a silence longer than TRIP_MAX_GAP_S', () => {
    const r = run(fixes([...idling(0, 600), [600 + 4000, 0, true], [600 + 4060, 0, true]]), EMPTY_IDLE_STATE, SETTINGS);
    // The idling after the silence starts again from its first fix.
    expect(r.summary).toEqual(['start@0', 'end@600:600s']);
    expect(r.next.since?.t).toBe(T0 + 4600 * 1000);
  });

  it('lets invalid fixes neither begin nor end idling by their speed', () => {
    expect(run(fixes([[0, 0, true, false], [100, 0, true], [200, 50, true, false], [500, 0, true], [600, 0, false]])).summary)
      .toEqual(['start@100', 'end@600:500s']);
  });

  it('decides the same across batches as in one, from the state it returns', () => {
    const all = fixes([[0, 40, true], ...idling(60, 600), [660, 30, true], ...idling(720, 1500), [1560, 0, false]]);
    const whole = run(all).summary;
    expect(whole).toEqual(['start@60', 'end@660:600s', 'start@720', 'end@1560:840s']);
    for (let cut = 1; cut < all.length; cut++) {
      const first = run(all.slice(0, cut));
      const second = run(all.slice(cut), JSON.parse(JSON.stringify(first.next)) as IdleState);
      expect([...first.summary, ...second.summary], `cut at ${cut}`).toEqual(whole);
    }
  });
});
