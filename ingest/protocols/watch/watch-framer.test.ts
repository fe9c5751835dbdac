import { describe, expect, it } from 'vitest';
import { feedFramer } from '../../conformance/feed-framer.ts';
import { cutFrame } from '../../frame-cutter.ts';
import { watch } from './watch.ts';
import { nextWatchFrame } from './watch-framer.ts';

const text = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const str = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

const LINK = '[SG*8800000015*0002*LK]';
const LINK_BATTERY = '[3G*9705141740*0009*LK,0,0,53]';
const FIX = '[3G*8308373902*0080*AL,230817,095346,A,47.083950,N,15.4821850,E,7.60,273.8,0.0,4,15,44,0,0,00200010,2,255,232,1,7605,42530,118,7605,58036,119,0,65.8]';
const INDEXED = '[ZJ*014111001350304*0034*0009*LK,0,0,19]';
// Voice: 0x7D 0x01..0x05 stand for `}`, `[`, `]`, `,`, `*`; the length counts them unescaped.
const VOICE_ESCAPED = Buffer.concat([text('[CS*1234567890*000e*TK,#!AMR'), Buffer.from([0x7d, 1, 0x7d, 2, 0x7d, 3, 0x7d, 4, 0x7d, 5, 0xff]), text(']')]);
const VOICE = Buffer.concat([text('[CS*1234567890*000e*TK,#!AMR}[],*'), Buffer.from([0xff]), text(']')]);

const feed = (...chunks: Uint8Array[]) => feedFramer(watch, chunks, str);

describe('watch framer', () => {
  it('needs more bytes for a frame cut at any point before its end', () => {
    for (const message of [LINK, LINK_BATTERY, FIX, INDEXED]) {
      for (let cut = 1; cut < message.length; cut++) expect(nextWatchFrame(text(message.slice(0, cut))).kind).toBe('incomplete');
    }
    for (let cut = 1; cut < VOICE_ESCAPED.length; cut++) expect(nextWatchFrame(VOICE_ESCAPED.subarray(0, cut)).kind).toBe('incomplete');
    expect(nextWatchFrame(new Uint8Array(0)).kind).toBe('incomplete');
  });

  it('cuts by the declared length, undoing the escapes', () => {
    const r = nextWatchFrame(Buffer.concat([VOICE_ESCAPED, text(LINK)]));
    expect(r).toMatchObject({ kind: 'frame', consumed: VOICE_ESCAPED.length });
    expect(r.kind === 'frame' && Buffer.from(r.frame).equals(VOICE)).toBe(true);
    const z = nextWatchFrame(text(INDEXED + LINK));
    expect(z.kind === 'frame' && str(z.frame)).toBe(INDEXED);
  });

  it('ends a frame whose length is wrong at a `]` before the next frame, not at one inside a Wi-Fi name', () => {
    const wrong = '[3G*880900242*013D*UD,120623,140020,A,48.949273,N, 4.3783060,E,18.56,43.8,0.0,12,100,76,0,0,00000000,0,255,1,Fiber,36:a1:ed:e1:91:4f,-75,[LG A/C]e725,66:a1:ed:e1:e7:25,-82,15.0]';
    expect(feed(text(wrong + LINK))).toEqual({ frames: [wrong, LINK], rest: 0 });
    expect(feed(text(wrong))).toEqual({ frames: [wrong], rest: 0 });
  });

  it('cuts the same frames from a stream split at every point', () => {
    const stream = Buffer.concat([text(LINK), text(FIX), VOICE_ESCAPED, text(INDEXED), text(LINK_BATTERY)]);
    const whole = { frames: [LINK, FIX, str(VOICE), INDEXED, LINK_BATTERY], rest: 0 };
    expect(feed(stream)).toEqual(whole);
    for (let cut = 1; cut < stream.length; cut++) expect(feed(stream.subarray(0, cut), stream.subarray(cut))).toEqual(whole);
  });

  it('skips garbage up to a `[`', () => {
    expect(nextWatchFrame(text('\r\n\x00junk[SG'))).toEqual({ kind: 'skip', consumed: 7 });
    expect(nextWatchFrame(text('garbage'))).toEqual({ kind: 'skip', consumed: 7 });
    expect(feed(text('\x00\xff junk '), text(LINK), text('\r\n'))).toEqual({ frames: [LINK], rest: 0 });
  });

  it('refuses a frame longer than maxFrameBytes as soon as its header says so, and an endless stream', () => {
    expect(watch.maxFrameBytes).toBe(140_000);
    expect(cutFrame(watch, text('[CS*1234567890*FFFFFF*TK,')).kind).toBe('invalid');
    const endless = text(`[CS*1234567890*FFFF*TK,${'0'.repeat(watch.maxFrameBytes)}`);
    expect(cutFrame(watch, endless).kind).toBe('invalid');
  });
});
