import { describe, expect, it } from 'vitest';
import { corpusSamples, sampleBytes } from '../../conformance/corpus.ts';
import { mutate, seededRandom } from '../../conformance/frame-mutations.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession } from '../../protocol.ts';
import { teltonika } from './teltonika.ts';

const MUTATIONS_PER_SAMPLE = 400;

describe('Teltonika under mutated input', () => {
  it('never throws anything but MalformedFrameError, from the framer or the decoder', () => {
    const random = seededRandom(0x7e17);
    const unexpected: string[] = [];
    let decoded = 0;
    for (const sample of corpusSamples('teltonika')) {
      const original = sampleBytes(sample);
      for (let i = 0; i < MUTATIONS_PER_SAMPLE; i++) {
        const input = mutate(i % 3 === 2 ? mutate(original, random) : original, random);
        try {
          const cut = teltonika.nextFrame(input);
          const frame = cut.kind === 'frame' ? cut.frame : input;
          const session = newSession();
          session.deviceId = '356307042441013';
          teltonika.decode(frame, session);
          decoded++;
        } catch (error) {
          if (!(error instanceof MalformedFrameError)) unexpected.push(`${sample.test_method}#${sample.order}: ${(error as Error).stack}`);
        }
      }
    }
    expect(unexpected.slice(0, 5)).toEqual([]);
    expect(decoded).toBeGreaterThan(0);
  });
});
