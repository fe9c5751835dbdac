import { describe, expect, it } from 'vitest';
import { corpusSamples, sampleBytes } from '../../conformance/corpus.ts';
import { feedFramer } from '../../conformance/feed-framer.ts';
import { cutFrame } from '../../frame-cutter.ts';
import { jt808 } from './jt808.ts';
import { nextJt808Frame } from './jt808-framer.ts';

const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));
// Real captures: a heartbeat, and a location report whose bytes need no escaping.
const HEARTBEAT = '7e0002000004304832546500b7ca7e';
const LOCATION = '7e02000032013511221122000700000000000c000301578cc006ca3a5c00470000000014072317201501040000000030011631010bd07e';
// A made-up frame holding 0x7e and 0x7d, escaped on the wire.
const ESCAPED = '7e0200000f0191715904370a2e0000007d0200000000007d017d027e';

describe('jt808 framer', () => {
  it('waits for the closing 0x7e at every split point, then returns the frame', () => {
    for (const sample of [HEARTBEAT, LOCATION]) {
      const bytes = hex(sample);
      for (let cut = 0; cut < bytes.length; cut++) expect(nextJt808Frame(bytes.subarray(0, cut)).kind, `cut at ${cut}`).toBe('incomplete');
      expect(nextJt808Frame(bytes)).toEqual({ kind: 'frame', frame: bytes, consumed: bytes.length });
    }
  });

  it('undoes 7d 02 → 7e and 7d 01 → 7d, consuming the escaped length', () => {
    const result = nextJt808Frame(hex(ESCAPED));
    expect(result.kind).toBe('frame');
    if (result.kind !== 'frame') return;
    expect(result.consumed).toBe(hex(ESCAPED).length);
    expect(Buffer.from(result.frame).toString('hex')).toBe('7e0200000f0191715904370a2e0000007e00000000007d7e7e');
  });

  it('cuts the same frames from a stream split at every point, skipping noise and a stray 0x7e', () => {
    const stream = hex('2424' + HEARTBEAT + '7e' + LOCATION + '0d0a');
    const whole = { frames: [HEARTBEAT, LOCATION], rest: 0 };
    expect(feedFramer(jt808, [stream])).toEqual(whole);
    for (let cut = 1; cut < stream.length; cut++) expect(feedFramer(jt808, [stream.subarray(0, cut), stream.subarray(cut)])).toEqual(whole);
  });

  it('keeps a 0x7d that escapes nothing, and cuts parenthesised e-lock text at its )', () => {
    const odd = nextJt808Frame(hex('7e00027d0000027e'));
    expect(odd.kind === 'frame' && Buffer.from(odd.frame).toString('hex')).toBe('7e00027d0000027e');
    const text = Buffer.from('(740190311185,1,001,ELOCK,3,529439)(7');
    expect(nextJt808Frame(text)).toEqual({ kind: 'frame', frame: text.subarray(0, 35), consumed: 35 });
    expect(nextJt808Frame(text.subarray(35)).kind).toBe('incomplete');
    // A '(' in noise does not swallow the binary frame after it.
    expect(nextJt808Frame(hex('28ff' + HEARTBEAT))).toEqual({ kind: 'skip', consumed: 2 });
  });

  it('gives up a stream with no closing 0x7e within maxFrameBytes', () => {
    const open = new Uint8Array(jt808.maxFrameBytes + 1).fill(0x30);
    open[0] = 0x7e;
    expect(cutFrame(jt808, open.subarray(0, jt808.maxFrameBytes)).kind).toBe('incomplete');
    expect(cutFrame(jt808, open).kind).toBe('invalid');
  });

  it('reads every corpus frame sample (checked byte for byte in the corpus test)', () => {
    for (const sample of corpusSamples('jt808').filter((s) => s.kind === 'frame')) expect(cutFrame(jt808, sampleBytes(sample)).kind).not.toBe('invalid');
  });
});
