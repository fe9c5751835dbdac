import { describe, expect, it } from 'vitest';
import { corpusSamples, sampleBytes } from '../../conformance/corpus.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession, type DecoderSession } from '../../protocol.ts';
import { gt06 } from './gt06.ts';

/** mulberry32: a tiny seeded PRNG, so every run mutates the same way and failures reproduce. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mutate(input: Uint8Array, random: () => number): Uint8Array {
  const bytes = Uint8Array.from(input);
  const pick = (n: number): number => Math.floor(random() * n);
  switch (pick(5)) {
    case 0: {
      for (let i = 1 + pick(4); i > 0; i--) bytes[pick(bytes.length)]! ^= 1 << pick(8);
      return bytes;
    }
    case 1:
      return bytes.subarray(0, pick(bytes.length));
    case 2: {
      // Length field edits: the framer and decoder must not trust it.
      const at = bytes[0] === 0x79 ? 2 + pick(2) : 2;
      if (at < bytes.length) bytes[at] = pick(256);
      return bytes;
    }
    case 3: {
      const at = pick(bytes.length + 1);
      const junk = Array.from({ length: 1 + pick(8) }, () => pick(256));
      return Uint8Array.from([...bytes.subarray(0, at), ...junk, ...bytes.subarray(at)]);
    }
    default: {
      // Overwrite a run (often the message type or a count) with random bytes.
      const at = pick(bytes.length);
      for (let i = at; i < Math.min(bytes.length, at + 1 + pick(4)); i++) bytes[i] = pick(256);
      return bytes;
    }
  }
}

/** Runs the bytes through framer and decoder as a connection would; rethrows anything unexpected. */
function replay(bytes: Uint8Array, session: DecoderSession): void {
  let rest = bytes;
  for (let guard = 0; guard < 64 && rest.length > 0; guard++) {
    const result = gt06.nextFrame(rest);
    if (result.kind === 'incomplete' || result.kind === 'invalid') return;
    if (result.kind === 'skip') {
      expect(result.consumed).toBeGreaterThan(0);
      rest = rest.subarray(result.consumed);
      continue;
    }
    expect(result.consumed).toBeGreaterThan(0);
    try {
      gt06.decode(result.frame, session);
    } catch (error) {
      if (!(error instanceof MalformedFrameError)) throw error;
    }
    rest = rest.subarray(result.consumed);
  }
}

const LOGIN = Buffer.from('78780d01086471700328358100093f040d0a', 'hex');

describe('gt06 fuzz', () => {
  it('survives 200 seeded mutations of every corpus sample with only MalformedFrameError', () => {
    const samples = corpusSamples('gt06');
    const random = prng(0x67_74_30_36);
    let runs = 0;
    for (const sample of samples) {
      const original = sampleBytes(sample);
      for (let i = 0; i < 200; i++) {
        const session = newSession();
        replay(LOGIN, session);
        session.options.model = i % 7 === 0 ? ['VL103', 'XT40', 'NT20', 'QH302R', 'R11', 'SEEWORLD', 'LW4G-4B'][i % 49 / 7] : undefined;
        const mutated = mutate(original, random);
        try {
          replay(mutated, session);
          // The decoder alone, on the raw mutated bytes, as if a framer had let them through.
          gt06.decode(mutated, session);
        } catch (error) {
          if (!(error instanceof MalformedFrameError)) throw new Error(`sample ${sample.order} mutation ${i} (${Buffer.from(mutated).toString('hex')}): ${String(error)}`);
        }
        runs++;
      }
    }
    expect(runs).toBe(samples.length * 200);
  }, 60_000);
});
