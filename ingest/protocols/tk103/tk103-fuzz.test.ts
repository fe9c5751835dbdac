import { describe, expect, it } from 'vitest';
import { corpusSamples, sampleBytes } from '../../conformance/corpus.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession } from '../../protocol.ts';
import { tk103 } from './tk103.ts';
import { mutate, seededRandom } from '../h02/seeded-mutations.ts';

const MUTATIONS = 200;

/** Anything the decoder throws must be MalformedFrameError; returns the other error, if any. */
function decodeQuietly(frame: Uint8Array): unknown {
  try {
    tk103.decode(frame, newSession());
  } catch (error) {
    if (!(error instanceof MalformedFrameError)) return error;
  }
  return undefined;
}

describe('tk103 fuzz', () => {
  it('survives seeded mutations of every corpus sample through framer and decoder', () => {
    const samples = corpusSamples('tk103');
    const escapes: string[] = [];
    for (const [index, sample] of samples.entries()) {
      const random = seededRandom(0x7103 + index);
      for (let m = 0; m < MUTATIONS; m++) {
        const input = mutate(sampleBytes(sample), random);
        const direct = decodeQuietly(input);
        if (direct) escapes.push(`${Buffer.from(input).toString('hex')}: ${String(direct)}`);
        let buffer = input;
        for (let guard = 0; buffer.length > 0 && guard < 1000; guard++) {
          const r = tk103.nextFrame(buffer);
          if (r.kind === 'incomplete' || r.kind === 'invalid') break;
          expect(r.consumed).toBeGreaterThan(0);
          if (r.kind === 'frame') {
            const framed = decodeQuietly(r.frame);
            if (framed) escapes.push(`${Buffer.from(r.frame).toString('hex')}: ${String(framed)}`);
          }
          buffer = buffer.subarray(r.consumed);
        }
      }
    }
    expect(escapes.slice(0, 5)).toEqual([]);
  });
});
