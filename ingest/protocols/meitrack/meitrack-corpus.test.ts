import { describe, expect, it } from 'vitest';
import { replayCorpus, type KnownDeviation } from '../../conformance/corpus.ts';
import { meitrack } from './meitrack.ts';

/** Samples we knowingly read differently from the corpus (none at present). */
const KNOWN: KnownDeviation[] = [];

describe('meitrack corpus', () => {
  const failures = replayCorpus(meitrack);
  const key = (s: { test_method: string; order: number }) => `${s.test_method}#${s.order}`;
  const known = new Set(KNOWN.map(key));

  it('reads every sample as the corpus expects, apart from the known deviations', () => {
    const unexpected = failures.filter((f) => !known.has(key(f.sample))).map((f) => `${key(f.sample)}: ${f.problem}`);
    expect(unexpected).toEqual([]);
  });

  it('still deviates on every known deviation (drop the entry once it passes)', () => {
    const failing = new Set(failures.map((f) => key(f.sample)));
    expect(KNOWN.filter((k) => !failing.has(key(k)))).toEqual([]);
  });
});
