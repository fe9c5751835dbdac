import { describe, expect, it } from 'vitest';
import { nextMeitrackFrame } from './meitrack-framer.ts';

const text = Buffer.from('$$F160,861412043027965,AAA,22,45.499458,-82.493581,220718171428,V,0,0,0,0,0.0,0,227940,119812,302|220|D8D6|086E1B2B,0000,0000|0000|0000|0191|0573,,,3,,002134,0,0*FA\r\n', 'latin1');
const short = Buffer.from('$$z27,861451040910625,AAC,1*D3\r\n', 'latin1');
const binary = Buffer.from(
  '24245838362c3336393830303031343039303032312c4343432c020134000100000023381f91ffe354b806c5e3121b0009130000000000000000d33801007cbf0200fe0101000435feeb02000500a3010000000000002a62650d0a',
  'hex',
);

describe('meitrack framer', () => {
  it.each([
    ['text', text],
    ['short', short],
    ['binary', binary],
  ])('frames a whole %s message and asks for more at every split point', (_name, frame) => {
    expect(nextMeitrackFrame(frame)).toEqual({ kind: 'frame', frame, consumed: frame.length });
    for (let cut = 0; cut < frame.length; cut++) expect(nextMeitrackFrame(frame.subarray(0, cut)).kind).toBe('incomplete');
  });

  it('cuts concatenated frames one at a time', () => {
    let buffer: Uint8Array = Buffer.concat([text, binary, short]);
    const seen: number[] = [];
    while (buffer.length) {
      const r = nextMeitrackFrame(buffer);
      if (r.kind !== 'frame') throw new Error(`unexpected ${r.kind}`);
      seen.push(r.frame.length);
      buffer = buffer.subarray(r.consumed);
    }
    expect(seen).toEqual([text.length, binary.length, short.length]);
  });

  it('skips noise up to the next $', () => {
    const noisy = Buffer.concat([Buffer.from('\r\nxx', 'latin1'), short]);
    const r = nextMeitrackFrame(noisy);
    expect(r).toEqual({ kind: 'skip', consumed: 4 });
    expect(nextMeitrackFrame(Buffer.from('$x$$', 'latin1'))).toEqual({ kind: 'skip', consumed: 2 });
  });

  it('rejects a length that is not decimal, or missing', () => {
    expect(nextMeitrackFrame(Buffer.from('$$A1x,', 'latin1')).kind).toBe('invalid');
    expect(nextMeitrackFrame(Buffer.from('$$A,123', 'latin1')).kind).toBe('invalid');
  });

  it('says how long a frame its length declares is while the body is still arriving', () => {
    expect(nextMeitrackFrame(Buffer.from('$$A12345', 'latin1'))).toEqual({ kind: 'incomplete' }); // more digits may follow
    expect(nextMeitrackFrame(Buffer.from('$$A12345,', 'latin1'))).toEqual({ kind: 'incomplete', frameBytes: 8 + 12345 });
  });
});
