import { describe, expect, it } from 'vitest';
import { DEFAULT_HARSH_SETTINGS, detectHarshDriving, EMPTY_HARSH_STATE, type HarshEvent, type HarshFix, type HarshState } from './harsh-driving.ts';

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

/** Fixes one per `step` seconds from T0 with these speeds (and headings, alarms, validity when given). */
function fixes(speeds: Array<number | null>, opts: { step?: number; headings?: Array<number | null>; alarms?: Record<number, string>; invalid?: number[]; from?: number } = {}): HarshFix[] {
  const step = opts.step ?? 1;
  return speeds.map((speedKmh, i) => ({
    fixTime: new Date(T0 + ((opts.from ?? 0) + i * step) * 1000),
    valid: !(opts.invalid ?? []).includes(i),
    latitude: 19.4,
    longitude: -99.1 + i * 1e-4,
    speedKmh,
    heading: opts.headings ? opts.headings[i] ?? null : 0,
    alarm: opts.alarms?.[i] ?? null,
  }));
}

function run(input: HarshFix[], state: HarshState = EMPTY_HARSH_STATE, settings = DEFAULT_HARSH_SETTINGS) {
  const out: HarshEvent[] = [];
  const next = detectHarshDriving(state, settings, input, out);
  // By fix: an acceleration or braking is decided at the next usable fix, after what that fix shows.
  const byFix = [...out].sort((a, b) => a.fix - b.fix);
  return { out: byFix, next, summary: byFix.map((e) => `${e.kind}@${e.fix}:${e.source}`) };
}

describe('detectHarshDriving', () => {
  it.each([
    // [case, speeds km/h at 1 s, expected]
    ['steady driving', [50, 51, 52, 51, 50], []],
    ['braking just under 3 m/s² (10.7 km/h per s)', [60, 49.3, 38.6], []],
    ['braking at 3 m/s² (10.8 km/h per s)', [60, 49.2, 49.2], ['braking@1:computed']],
    ['acceleration just under 2.5 m/s² (8.9 km/h per s)', [20, 28.9], []],
    ['acceleration at 2.5 m/s² (9 km/h per s)', [20, 29, 29], ['acceleration@1:computed']],
    ['a hard stop over four seconds is one manoeuvre', [60, 45, 30, 15, 0], ['braking@1:computed']],
    ['a take-off then a stop are two', [0, 15, 30, 40, 40, 25, 10], ['acceleration@1:computed', 'braking@5:computed']],
    ['a spike beyond 1.2 g is a glitch', [50, 100, 50], []],
    ['standstill jitter', [0, 2, 0, 3, 1, 0], []],
    ['a speed that dips and comes straight back is one bad speed', [50, 30, 50, 50], []],
    ['so is one that jumps up and straight back', [30, 45, 30, 30], []],
    ['a braking held is no spike', [60, 40, 40], ['braking@1:computed']],
    ['a braking into a harsh take-off is a spike', [60, 40, 55, 55], []],
  ])('%s', (_, speeds, expected) => {
    expect(run(fixes(speeds)).summary).toEqual(expected);
  });

  it('measures the acceleration over the interval between the fixes', () => {
    const { out } = run(fixes([72, 36, 36], { step: 2 })); // 20 m/s → 10 m/s in 2 s: 5 m/s²
    expect(out[0]).toMatchObject({ kind: 'braking', accelerationMs2: 5, speedBeforeKmh: 72, speedAfterKmh: 36, intervalS: 2 });
  });

  it('compares no fixes further apart than HARSH_MAX_GAP_S, nor closer than 1 s', () => {
    // 100 → 0 km/h over 11 s would be 2.5 m/s² braking... but also any drop over a gap is an average.
    expect(run(fixes([100, 0], { step: 11 }), EMPTY_HARSH_STATE, { ...DEFAULT_HARSH_SETTINGS, brakingMs2: 2 }).summary).toEqual([]);
    expect(run(fixes([100, 0, 0], { step: 10 }), EMPTY_HARSH_STATE, { ...DEFAULT_HARSH_SETTINGS, brakingMs2: 2 }).summary).toEqual(['braking@1:computed']);
    // Half a second apart: the later fix is skipped, the next compared with the first.
    expect(run(fixes([50, 44, 50], { step: 0.5 })).summary).toEqual([]);
  });

  it('uses valid fixes with a speed only', () => {
    expect(run(fixes([60, 0, 58], { invalid: [1] })).summary).toEqual([]);
    expect(run(fixes([60, null, 58])).summary).toEqual([]);
  });

  it('finds harsh cornering as v·ω at speed, the shorter way round', () => {
    // 36 km/h = 10 m/s turning 20°/s: 10 × 0.349 = 3.5 m/s².
    const turn = run(fixes([36, 36, 36], { headings: [350, 10, 30] }));
    expect(turn.summary).toEqual(['cornering@1:computed']);
    expect(turn.out[0]!.headingChangeDeg).toBe(20);
    expect(turn.out[0]!.accelerationMs2).toBeCloseTo(3.49, 2);
    // Left turn, counter-clockwise.
    expect(run(fixes([36, 36], { headings: [30, 5] })).out[0]!.headingChangeDeg).toBe(-25);
    // The same heading change in 2 s is half the lateral acceleration: a gentle bend.
    expect(run(fixes([36, 36], { headings: [350, 10], step: 2 })).summary).toEqual([]);
  });

  it('ignores headings below HARSH_CORNERING_MIN_SPEED_KMH, missing ones, and implausible turns', () => {
    // 18 km/h swinging 60°/s (parking manoeuvre, or GPS heading noise at walking pace).
    expect(run(fixes([18, 18], { headings: [0, 60] })).summary).toEqual([]);
    expect(run(fixes([36, 36], { headings: [0, null] })).summary).toEqual([]);
    // 100 km/h and a 90° heading jump in a second: 24 m/s², a heading glitch.
    expect(run(fixes([100, 100], { headings: [0, 90] })).summary).toEqual([]);
  });

  it('counts a tracker alarm, whatever its fix, and a computed one of the same kind near it once', () => {
    // The tracker saw the braking at fix 1; the speeds show it over 1 → 2 as well.
    const both = run(fixes([60, 50, 30, 30], { alarms: { 1: 'hardBraking' } }));
    expect(both.summary).toEqual(['braking@1:tracker']);
    expect(both.out[0]).toMatchObject({ alarm: 'hardBraking', accelerationMs2: null });
    // Same fix: the tracker's comes first.
    expect(run(fixes([60, 30], { alarms: { 1: 'hardBraking' } })).summary).toEqual(['braking@1:tracker']);
    // Computed first, the tracker's alarm 3 s later is the same manoeuvre.
    expect(run(fixes([60, 30, 30, 30, 30], { alarms: { 4: 'hardBraking' } })).summary).toEqual(['braking@1:computed']);
    // Beyond HARSH_SAME_EVENT_S (5 s) it is another one.
    expect(run(fixes([60, 30, 30, 30, 30, 30, 30, 30], { alarms: { 7: 'hardBraking' } })).summary).toEqual(['braking@1:computed', 'braking@7:tracker']);
    // Another kind is never merged; an invalid fix's alarm counts.
    expect(run(fixes([60, 30, 30, 30], { alarms: { 2: 'hardCornering' }, invalid: [2] })).summary).toEqual(['braking@1:computed', 'cornering@2:tracker']);
    // Other names decoders give: tk103's `braking`, meitrack's `cornering`; other alarms are not harsh.
    expect(run(fixes([50, 50, 50], { alarms: { 0: 'braking', 1: 'sos', 2: 'acceleration' } })).summary).toEqual(['braking@0:tracker', 'acceleration@2:tracker']);
  });

  it('decides a waiting braking at a gap, or when the tracker reports it too', () => {
    const gap = [...fixes([60, 40]), ...fixes([40], { from: 60 })];
    expect(run(gap).summary).toEqual(['braking@1:computed']);
    // The next fix has no GPS lock, but the tracker felt the braking: decided at once, counted once.
    const felt = run(fixes([60, 40, 40], { alarms: { 2: 'hardBraking' }, invalid: [2] }));
    expect(felt.summary).toEqual(['braking@1:computed']);
    expect(felt.next.pending).toBeNull();
    // Left waiting at the end of a batch, it is in the state.
    expect(run(fixes([60, 40])).next.pending).toMatchObject({ kind: 'braking', at: { t: T0 + 1000, speedKmh: 40 } });
  });

  it('decides the same across batches as in one, from the state it returns', () => {
    // With a spike (30 → 50 → 30 at fixes 4 to 6) that counts nothing, whatever the cut.
    const all = fixes([0, 15, 30, 30, 30, 50, 30, 30, 30, 60, 60, 45, 30, 10, 0, 0, 0, 0, 0, 0, 0, 20, 20], { alarms: { 19: 'hardBraking', 21: 'hardAcceleration' } });
    const whole = run(all);
    for (let cut = 1; cut < all.length; cut++) {
      const first = run(all.slice(0, cut));
      const second = run(all.slice(cut), JSON.parse(JSON.stringify(first.next)) as HarshState);
      const seconds = (r: { out: HarshEvent[] }) => r.out.map((e) => `${e.kind}@${(e.at.t - T0) / 1000}:${e.source}`);
      expect([...seconds(first), ...seconds(second)].sort(), `cut at ${cut}`).toEqual([...whole.summary].sort());
    }
    expect(whole.summary).toEqual(['acceleration@1:computed', 'acceleration@9:computed', 'braking@11:computed', 'braking@19:tracker', 'acceleration@21:tracker']);
  });
});
