import { describe, expect, it } from 'vitest';
import { corpusSamples, sampleBytes } from '../../conformance/corpus.ts';
import { nextGt06Frame } from './gt06-framer.ts';

const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));
// A real 0x12 GPS/LBS capture and a real login, both with consistent lengths and no CR LF inside.
const GPS = hex('78781f120f0a140e150bc505e51e780293a9e800540000f601006e0055da00035f240d0a');
const LOGIN = hex('78780d01086471700328358100093f040d0a');

describe('gt06 framer', () => {
  it('answers incomplete at every split point of a real frame, then returns the frame', () => {
    for (const sample of [GPS, LOGIN]) {
      for (let cut = 0; cut < sample.length; cut++) expect(nextGt06Frame(sample.subarray(0, cut)).kind, `cut at ${cut}`).toBe('incomplete');
      expect(nextGt06Frame(sample)).toEqual({ kind: 'frame', frame: sample, consumed: sample.length });
    }
  });

  it('cuts concatenated frames one at a time', () => {
    const both = new Uint8Array([...LOGIN, ...GPS]);
    const first = nextGt06Frame(both);
    expect(first).toEqual({ kind: 'frame', frame: LOGIN, consumed: LOGIN.length });
    const second = nextGt06Frame(both.subarray(LOGIN.length));
    expect(second).toEqual({ kind: 'frame', frame: GPS, consumed: GPS.length });
  });

  it('skips garbage before a frame', () => {
    const noisy = new Uint8Array([0x00, 0xff, 0x0d, 0x0a, 0x12, ...GPS]);
    const skip = nextGt06Frame(noisy);
    expect(skip).toEqual({ kind: 'skip', consumed: 5 });
    expect(nextGt06Frame(noisy.subarray(5)).kind).toBe('frame');
  });

  it('does not treat a lone 0x78 as garbage: it may start a frame', () => {
    expect(nextGt06Frame(Uint8Array.of(0x78)).kind).toBe('incomplete');
    expect(nextGt06Frame(Uint8Array.of(0x78, 0x01))).toEqual({ kind: 'skip', consumed: 2 }); // neither byte can start a frame
    expect(nextGt06Frame(Uint8Array.of(0x00, 0x78))).toEqual({ kind: 'skip', consumed: 1 });
  });

  it('says how long a frame its header declares is while the body is still arriving', () => {
    expect(nextGt06Frame(hex('7979ffff12000000'))).toEqual({ kind: 'incomplete', frameBytes: 4 + 0xffff + 2 });
  });

  it('reads every corpus frame sample (checked value by value in the corpus test)', () => {
    for (const sample of corpusSamples('gt06').filter((s) => s.kind === 'frame')) expect(nextGt06Frame(sampleBytes(sample)).kind).toBe('frame');
  });
});
