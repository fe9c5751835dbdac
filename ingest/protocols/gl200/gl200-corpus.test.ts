import { describe, expect, it } from 'vitest';
import { replayCorpus, type KnownDeviation } from '../../conformance/corpus.ts';
import { gl200 } from './gl200.ts';

/** Samples we knowingly read differently from the corpus. */
const KNOWN: KnownDeviation[] = [];

describe('gl200 corpus', () => {
  const failures = replayCorpus(gl200);
  const isKnown = (f: { sample: { test_method: string; order: number } }) =>
    KNOWN.some((k) => k.test_method === f.sample.test_method && k.order === f.sample.order);

  it('reads every sample as the corpus expects, apart from the known deviations', () => {
    const unexpected = failures.filter((f) => !isKnown(f)).map((f) => `${f.sample.test_method}#${f.sample.order}: ${f.problem}`);
    expect(unexpected).toEqual([]);
  });

  it.each(KNOWN.length ? KNOWN : [undefined])('known deviation still deviates: %o', (known) => {
    if (!known) return;
    expect(failures.some((f) => f.sample.test_method === known.test_method && f.sample.order === known.order)).toBe(true);
  });
});
