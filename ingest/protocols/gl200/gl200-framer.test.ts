import { describe, expect, it } from 'vitest';
import { nextGl200Frame } from './gl200-framer.ts';

const fri = Buffer.from('+RESP:GTFRI,060228,862894020180553,,,10,1,1,20.0,147,329.7,-62.899703,-17.720434,20160309113548,0736,0003,6AAE,3381,00,913.3,,,,0,220101,,,,20160309073554,132B$', 'latin1');
const hbd = Buffer.from('+ACK:GTHBD,1A0401,135790246811220,,20100214093254,11F0$', 'latin1');
const legacy = Buffer.from('+RESP:GTFRI,020102,135790246811220,,0,0,1,1,4.3,92,70.0,121.354335,31.222073,20090214013254,0460,0000,18d8,6141,00,,20090214093254,11F0\r\n', 'latin1');

describe('gl200 framer', () => {
  it.each([
    ['GTFRI', fri],
    ['heartbeat', hbd],
  ])('frames a whole %s message and asks for more at every split point', (_name, frame) => {
    expect(nextGl200Frame(frame)).toEqual({ kind: 'frame', frame, consumed: frame.length });
    for (let cut = 0; cut < frame.length; cut++) expect(nextGl200Frame(frame.subarray(0, cut)).kind).toBe('incomplete');
  });

  it('ends a message without `$` at the line break, which it consumes', () => {
    const r = nextGl200Frame(legacy);
    expect(r.kind).toBe('frame');
    if (r.kind !== 'frame') return;
    expect(Buffer.from(r.frame).toString('latin1')).toBe(legacy.toString('latin1').trimEnd());
    expect(r.consumed).toBe(legacy.length - 1);
    // The `\n` left over is noise before the next frame.
    expect(nextGl200Frame(legacy.subarray(r.consumed))).toEqual({ kind: 'skip', consumed: 1 });
  });

  it('cuts concatenated frames one at a time, skipping what lies between', () => {
    let buffer: Uint8Array = Buffer.concat([fri, Buffer.from('\r\n'), hbd, Buffer.from('\0\0'), fri]);
    const frames: number[] = [];
    for (let guard = 0; buffer.length && guard < 20; guard++) {
      const r = nextGl200Frame(buffer);
      if (r.kind === 'frame') frames.push(r.frame.length);
      if (r.kind !== 'frame' && r.kind !== 'skip') throw new Error(`unexpected ${r.kind}`);
      buffer = buffer.subarray(r.consumed);
    }
    expect(frames).toEqual([fri.length, hbd.length, fri.length]);
  });

  it('skips garbage up to the next +', () => {
    expect(nextGl200Frame(Buffer.from('xyz+RESP', 'latin1'))).toEqual({ kind: 'skip', consumed: 3 });
    expect(nextGl200Frame(Buffer.from('garbage', 'latin1'))).toEqual({ kind: 'skip', consumed: 7 });
  });
});
