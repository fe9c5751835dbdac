import { describe, expect, it } from 'vitest';
import { feedFramer } from '../../conformance/feed-framer.ts';
import { cutFrame } from '../../frame-cutter.ts';
import { gps103 } from './gps103.ts';
import { nextGps103Frame } from './gps103-framer.ts';

const text = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const str = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

const LOGIN = '##,imei:359586015829802,A;';
const HEARTBEAT = '359586015829802;';
const POSITION = 'imei:359586015829802,tracker,150429094805,,F,014805.000,A,3045.8003,N,07306.2910,W,0.00,0;';
const ALTERNATIVE = 'imei:861359038609986,Equipo 1,---,------,----,214734,241018,26,1,-33.42317,-70.61930,067,229,0674,1.00,08,0,1,---,*';

const feed = (...chunks: Uint8Array[]) => feedFramer(gps103, chunks, str);

describe('gps103 framer', () => {
  it('needs more bytes for a message cut at any point before its end', () => {
    for (const message of [LOGIN, HEARTBEAT, POSITION, ALTERNATIVE]) {
      for (let cut = 1; cut < message.length; cut++) expect(nextGps103Frame(text(message.slice(0, cut))).kind).toBe('incomplete');
    }
    expect(nextGps103Frame(new Uint8Array(0)).kind).toBe('incomplete');
  });

  it('cuts at `;` and `*` (kept in the frame) and at a line break (dropped)', () => {
    const r = nextGps103Frame(text(POSITION + LOGIN));
    expect(r).toMatchObject({ kind: 'frame', consumed: POSITION.length });
    expect(r.kind === 'frame' && str(r.frame)).toBe(POSITION);
    const star = nextGps103Frame(text(ALTERNATIVE + HEARTBEAT));
    expect(star.kind === 'frame' && str(star.frame)).toBe(ALTERNATIVE);
    const line = nextGps103Frame(text('imei:359586015829802,tracker,1301251602,,F,080251.000,A,3223.5832,N,11058.9449,W,0.03,\r\nimei:'));
    expect(line.kind === 'frame' && str(line.frame)).toBe('imei:359586015829802,tracker,1301251602,,F,080251.000,A,3223.5832,N,11058.9449,W,0.03,');
    expect(line.kind === 'frame' && line.consumed).toBe(line.kind === 'frame' ? line.frame.length + 2 : -1);
  });

  it('cuts the same messages from a stream split at every point', () => {
    const stream = text(`${LOGIN}${HEARTBEAT}\r\n${POSITION}\n${ALTERNATIVE}\r\n`);
    const whole = { frames: [LOGIN, HEARTBEAT, POSITION, ALTERNATIVE], rest: 0 };
    expect(feed(stream)).toEqual(whole);
    for (let cut = 1; cut < stream.length; cut++) expect(feed(stream.subarray(0, cut), stream.subarray(cut))).toEqual(whole);
  });

  it('skips garbage up to a byte that can start a message', () => {
    expect(nextGps103Frame(text('\r\n\x00\xffXYZ imei:1'))).toEqual({ kind: 'skip', consumed: 8 });
    expect(nextGps103Frame(text('garbage'))).toEqual({ kind: 'skip', consumed: 7 });
    expect(feed(text('\x00\xff junk, '), text(POSITION), text('\r\n'))).toEqual({ frames: [POSITION], rest: 0 });
  });

  it('refuses a stream with no message end within maxFrameBytes', () => {
    expect(gps103.maxFrameBytes).toBe(2048);
    const endless = text(`imei:359586015829802,${'0'.repeat(gps103.maxFrameBytes)}`);
    expect(cutFrame(gps103, endless).kind).toBe('invalid');
    const longest = text(`${'1'.repeat(gps103.maxFrameBytes - 1)};`);
    expect(cutFrame(gps103, longest)).toMatchObject({ kind: 'frame', consumed: gps103.maxFrameBytes });
  });
});
