import { describe, expect, it } from 'vitest';
import type { DecoderSession } from '../../protocol.ts';
import { replayCorpus, type KnownDeviation } from '../../conformance/corpus.ts';
import { gt06 } from './gt06.ts';

/** Corpus `decoder_state.modelOverride` is the operator-configured model the decoder reads. */
function applyState(session: DecoderSession, state: Record<string, unknown>): void {
  if (typeof state.modelOverride === 'string') session.options.model = state.modelOverride;
}

const KNOWN: KnownDeviation[] = [];

describe('gt06 corpus', () => {
  const failures = replayCorpus(gt06, applyState);
  const key = (m: string, o: number): string => `${m}#${o}`;
  const known = new Set(KNOWN.map((k) => key(k.test_method, k.order)));

  it('reads every sample as the corpus expects, apart from the known deviations', () => {
    const unexpected = failures.filter((f) => !known.has(key(f.sample.test_method, f.sample.order))).map((f) => `${f.sample.kind} ${key(f.sample.test_method, f.sample.order)}: ${f.problem}`);
    expect(unexpected).toEqual([]);
  });

  it('still fails every known deviation (so the list cannot rot)', () => {
    const failing = new Set(failures.map((f) => key(f.sample.test_method, f.sample.order)));
    expect(KNOWN.filter((k) => !failing.has(key(k.test_method, k.order)))).toEqual([]);
  });
});
