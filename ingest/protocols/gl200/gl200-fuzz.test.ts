import { describe, expect, it } from 'vitest';
import { corpusSamples, sampleBytes } from '../../conformance/corpus.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession } from '../../protocol.ts';
import { gl200 } from './gl200.ts';

/** mulberry32: a tiny seeded PRNG so every run mutates the same way. */
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

const INTERESTING = [0x2c, 0x2a, 0x7c, 0x24, 0x2d, 0x2e, 0x30, 0x39, 0x41, 0x46, 0x00, 0xfe, 0xff];

function mutate(bytes: Uint8Array, random: () => number): Uint8Array {
  const out = [...bytes];
  const edits = 1 + Math.floor(random() * 4);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(random() * (out.length + 1));
    const pick = INTERESTING[Math.floor(random() * INTERESTING.length)]!;
    switch (Math.floor(random() * 6)) {
      case 0: if (at < out.length) out[at] = out[at]! ^ (1 << Math.floor(random() * 8)); break;
      case 1: out.length = at; break;
      case 2: out.splice(at, 0, pick); break;
      case 3: out.splice(at, 1); break;
      case 4: if (at < out.length) out[at] = pick; break;
      default: if (at < out.length) out[at] = 0x30 + Math.floor(random() * 10); break;
    }
  }
  return Uint8Array.from(out);
}

describe('gl200 fuzz', () => {
  it.each(corpusSamples('gl200').map((s) => [`${s.test_method}#${s.order}`, s] as const))('%s: mutations throw nothing but MalformedFrameError', (_name, sample) => {
    const random = prng(sample.order * 7919 + 1);
    const original = sampleBytes(sample);
    for (let i = 0; i < 200; i++) {
      const input = mutate(original, random);
      const session = newSession();
      try {
        const framed = gl200.nextFrame(input);
        gl200.decode(framed.kind === 'frame' ? framed.frame : input, session);
      } catch (error) {
        expect(error).toBeInstanceOf(MalformedFrameError);
      }
    }
  });
});
