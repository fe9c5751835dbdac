import { describe, expect, it } from 'vitest';
import { DAY_MS, expiredRanges, missingRanges, partitionName, readyWindow } from './position-partition-plan.ts';

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);
const range = (from: string, to: string) => ({ from: day(from), to: day(to) });
const days = (ranges: Array<{ from: number; to: number }>) =>
  ranges.map((r) => `${new Date(r.from).toISOString().slice(0, 10)}..${new Date(r.to).toISOString().slice(0, 10)}`);

describe('missingRanges', () => {
  const window = range('2024-05-01', '2024-05-04');

  it.each([
    ['nothing exists: one partition a day', [], 1, ['2024-05-01..2024-05-02', '2024-05-02..2024-05-03', '2024-05-03..2024-05-04']],
    ['some days exist: only the others', [range('2024-05-02', '2024-05-03')], 1, ['2024-05-01..2024-05-02', '2024-05-03..2024-05-04']],
    ['all exist: nothing', [range('2024-04-30', '2024-05-01'), range('2024-05-01', '2024-05-02'), range('2024-05-02', '2024-05-03'), range('2024-05-03', '2024-05-04')], 1, []],
    ['a wider partition covers several days', [range('2024-04-29', '2024-05-03')], 1, ['2024-05-03..2024-05-04']],
    // 1 May 2024 is a Wednesday: weekly slots run Monday 29 April to Monday 6 May.
    ['weekly partitions start on Mondays', [], 7, ['2024-04-29..2024-05-06']],
    ['a weekly slot partly covered by daily partitions gets its gaps', [range('2024-04-30', '2024-05-02')], 7, ['2024-04-29..2024-04-30', '2024-05-02..2024-05-06']],
  ] as const)('%s', (_, existing, partitionDays, expected) => {
    expect(days(missingRanges([...existing], window, partitionDays))).toEqual(expected);
  });

  it('never overlaps what exists, whatever the widths', () => {
    const existing = [range('2024-04-20', '2024-04-27'), range('2024-05-02', '2024-05-05'), range('2024-05-09', '2024-05-10')];
    const window = range('2024-04-25', '2024-05-12');
    for (const width of [1, 2, 3, 7, 10]) {
      const made = missingRanges(existing, window, width);
      const all = [...existing, ...made].sort((a, b) => a.from - b.from);
      for (let i = 1; i < all.length; i++) expect(all[i]!.from, `width ${width}`).toBeGreaterThanOrEqual(all[i - 1]!.to);
      // Every day of the window is covered.
      for (let t = window.from; t < window.to; t += DAY_MS) expect(all.some((r) => r.from <= t && t < r.to), `width ${width}, ${new Date(t).toISOString()}`).toBe(true);
    }
  });
});

describe('readyWindow', () => {
  it('runs from today midnight UTC through the end of the day aheadDays later', () => {
    expect(days([readyWindow(new Date('2024-05-01T23:59:59Z'), 2)])).toEqual(['2024-05-01..2024-05-04']);
  });
});

describe('expiredRanges', () => {
  it('takes partitions that end at or before the cutoff, and none straddling it', () => {
    const partitions = [range('2024-05-03', '2024-05-04'), range('2024-05-01', '2024-05-02'), range('2024-05-02', '2024-05-03')];
    expect(days(expiredRanges(partitions, Date.parse('2024-05-03T00:00:00Z')))).toEqual(['2024-05-01..2024-05-02', '2024-05-02..2024-05-03']);
    expect(days(expiredRanges(partitions, Date.parse('2024-05-02T23:59:59Z')))).toEqual(['2024-05-01..2024-05-02']);
  });
});

describe('partitionName', () => {
  it('names a partition by the day it starts, and the time when it does not start at midnight', () => {
    expect(partitionName(day('2024-05-01'))).toBe('positions_p20240501');
    expect(partitionName(day('2024-05-01') + 12.5 * 3_600_000)).toBe('positions_p20240501_1230');
  });
});
