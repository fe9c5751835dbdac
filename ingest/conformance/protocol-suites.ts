import { describe, expect, it } from 'vitest';
import { MalformedFrameError } from '../malformed-frame-error.ts';
import { newSession, type DecoderSession, type Protocol } from '../protocol.ts';
import { corpusSamples, replayCorpus, sampleBytes, type KnownDeviation } from './corpus.ts';
import { mutate, seededRandom } from './frame-mutations.ts';
import { cutFrame } from '../frame-cutter.ts';

const key = (s: { test_method: string; order: number }) => `${s.test_method}#${s.order}`;

/**
 * The conformance tests of one protocol: every corpus sample read as expected but for the `known`
 * deviations, and every known deviation still happening, so the list cannot go stale.
 */
export function conformanceSuite(
  protocol: Protocol,
  known: KnownDeviation[],
  applyState?: (session: DecoderSession, state: Record<string, unknown>) => void,
  /** The corpus's name for the samples, when not the protocol's (see replayCorpus). */
  corpusName = protocol.name,
): void {
  describe(`${corpusName} conformance corpus`, () => {
    const failures = replayCorpus(protocol, applyState, corpusName);
    const knownKeys = new Set(known.map(key));

    it('reads every sample as the corpus expects, apart from the listed deviations', () => {
      const unexpected = failures.filter((f) => !knownKeys.has(key(f.sample)));
      expect(unexpected.map((f) => `${f.sample.kind} ${key(f.sample)} (${f.sample.verify}): ${f.problem}`)).toEqual([]);
    });

    it('still deviates on every listed sample (drop an entry once it passes)', () => {
      const failing = new Set(failures.map((f) => key(f.sample)));
      expect(known.filter((k) => !failing.has(key(k)))).toEqual([]);
    });
  });
}

/** Runs bytes through framer and decoder as a connection would; returns what escaped other than MalformedFrameError. */
function escapes(protocol: Protocol, input: Uint8Array, session: DecoderSession): string[] {
  const found: string[] = [];
  const decode = (frame: Uint8Array) => {
    try {
      protocol.decode(frame, session);
    } catch (error) {
      if (!(error instanceof MalformedFrameError)) found.push(`${Buffer.from(frame).toString('hex')}: ${(error as Error).stack}`);
    }
  };
  decode(input);
  let rest = input;
  for (let guard = 0; rest.length > 0 && guard < 1000; guard++) {
    let cut;
    try {
      cut = cutFrame(protocol, rest);
    } catch (error) {
      found.push(`framer on ${Buffer.from(rest).toString('hex')}: ${(error as Error).stack}`);
      break;
    }
    if (cut.kind === 'incomplete' || cut.kind === 'invalid') break;
    if (cut.consumed <= 0) {
      found.push(`framer made no progress on ${Buffer.from(rest).toString('hex')}`);
      break;
    }
    if (cut.kind === 'frame') decode(cut.frame);
    rest = rest.subarray(cut.consumed);
  }
  return found;
}

/**
 * The fuzz test of one protocol: seeded mutations of every corpus sample through the framer and the
 * decoder must never throw anything but MalformedFrameError, and the framer must always move on.
 */
export function fuzzSuite(
  protocol: Protocol,
  options: {
    seed: number;
    mutationsPerSample: number;
    prepare?: (session: DecoderSession) => void;
    /** The corpus's name for the samples, when not the protocol's (see replayCorpus). */
    corpusName?: string;
  },
): void {
  const corpusName = options.corpusName ?? protocol.name;
  describe(`${corpusName} under mutated input`, () => {
    it(`survives ${options.mutationsPerSample} seeded mutations of every corpus sample`, () => {
      const found: string[] = [];
      for (const [index, sample] of corpusSamples(corpusName).entries()) {
        const random = seededRandom(options.seed + index);
        const original = sampleBytes(sample);
        for (let i = 0; i < options.mutationsPerSample && found.length < 5; i++) {
          const session = newSession();
          options.prepare?.(session);
          found.push(...escapes(protocol, mutate(original, random), session));
        }
      }
      expect(found.slice(0, 5)).toEqual([]);
    });
  });
}
