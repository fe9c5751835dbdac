import { describe, expect, it } from 'vitest';
import { parseLsn, readTarget, replayedThrough, type LsnSample, type ReplicaCheck } from './read-target.ts';

const rule = { maxLagMs: 5000, maxCheckAgeMs: 5000 };
const healthy: ReplicaCheck = { at: 10_000, up: true, replayedThrough: 9_000, lagMs: 1_000 };

describe('readTarget', () => {
  it.each<[string, ReplicaCheck | undefined, number, number, 'replica' | 'primary']>([
    ['a healthy replica within the lag limit', healthy, 10_500, 0, 'replica'],
    ['lag exactly at the limit', { ...healthy, replayedThrough: 5_000, lagMs: 5_000 }, 10_500, 0, 'replica'],
    ['lag past the limit', { ...healthy, replayedThrough: 4_999, lagMs: 5_001 }, 10_500, 0, 'primary'],
    ['no measurement yet', undefined, 10_500, 0, 'primary'],
    ['a replica that is down', { at: 10_000, up: false }, 10_500, 0, 'primary'],
    ['a replica that has not reached any sample of the primary', { at: 10_000, up: true, lagMs: 7_000 }, 10_500, 0, 'primary'],
    ['a measurement too old to vouch for it', healthy, 15_001, 0, 'primary'],
    ['this process wrote after what the replica has replayed', healthy, 10_500, 9_500, 'primary'],
    ['the replica has replayed past this process\'s write', healthy, 10_500, 8_999, 'replica'],
  ])('%s', (_case, check, now, lastOwnWriteAt, expected) => {
    expect(readTarget(check, now, rule, lastOwnWriteAt)).toBe(expected);
  });
});

describe('parseLsn', () => {
  it('reads both halves as hexadecimal', () => {
    expect(parseLsn('0/0')).toBe(0n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(parseLsn('1/0') > parseLsn('0/FFFFFFFF')).toBe(true);
  });

  it('refuses anything else', () => {
    expect(() => parseLsn('16B374D848')).toThrow('not a WAL position: "16B374D848"');
  });
});

describe('replayedThrough', () => {
  it('gives the time of the newest primary position the replica has reached, and forgets older ones', () => {
    const samples: LsnSample[] = [{ at: 1, lsn: 100n }, { at: 2, lsn: 100n }, { at: 3, lsn: 250n }, { at: 4, lsn: 300n }];
    expect(replayedThrough(samples, 260n)).toBe(3);
    expect(samples.map((s) => s.at)).toEqual([3, 4]);
    expect(replayedThrough(samples, 300n)).toBe(4);
    expect(samples.map((s) => s.at)).toEqual([4]);
  });

  it('an idle primary: the same position at every sample is reached at the newest one, so no lag builds up', () => {
    const samples: LsnSample[] = [{ at: 1_000, lsn: 500n }, { at: 60_000, lsn: 500n }];
    expect(replayedThrough(samples, 500n)).toBe(60_000);
  });

  it('undefined when the replica has reached none of them, keeping them all', () => {
    const samples: LsnSample[] = [{ at: 1, lsn: 100n }, { at: 2, lsn: 200n }];
    expect(replayedThrough(samples, 99n)).toBeUndefined();
    expect(samples).toHaveLength(2);
  });
});
