import { describe, expect, it } from 'vitest';
import { h02 } from './h02.ts';
import { feedFramer } from '../../conformance/feed-framer.ts';
import { nextH02Frame } from './h02-framer.ts';

const text = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const hex = (s: string): Uint8Array => Buffer.from(s, 'hex');
const cat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(Buffer.concat(parts));

const SENTENCE = text('*HQ,4210051415,V1,164549,A,0956.3869,N,08406.7068,W,000.00,000,221215,FFFFFBFF,712,01,0,0,6#');
const SHORT = hex('2441060116601245431311165035313006004318210e000000fffffbffff0024');
const LONG = hex('24410600082621532131081504419390060740418306000000fffffbfdff0015060000002c02dc0c000000001f');
const X_RECORD = hex('5800009814991024031101175540227006012321670c000095fffffbffff0033');

const feed = (...chunks: Uint8Array[]) => feedFramer(h02, chunks);

const h = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('h02 framer', () => {
  it('waits for the rest of a frame cut at any point', () => {
    for (const frame of [SENTENCE, SHORT, X_RECORD]) {
      for (let cut = 1; cut < frame.length; cut++) expect(nextH02Frame(frame.subarray(0, cut)).kind).toBe('incomplete');
    }
    // A long record cut exactly after 32 bytes is indistinguishable from a short one (see framer).
    for (let cut = 1; cut < LONG.length; cut++) if (cut !== 32) expect(nextH02Frame(LONG.subarray(0, cut)).kind).toBe('incomplete');
  });

  it('cuts the same frames from a stream split at every point', () => {
    const stream = cat(SENTENCE, text('\r\n'), SHORT, SENTENCE, X_RECORD, LONG);
    const whole = [h(SENTENCE), h(SHORT), h(SENTENCE), h(X_RECORD), h(LONG)];
    expect(feed(stream)).toEqual({ frames: whole, rest: 0 });
    for (let cut = 1; cut < stream.length; cut++) {
      const boundary = stream.length - LONG.length + 32;
      if (cut === boundary) continue;
      expect(feed(stream.subarray(0, cut), stream.subarray(cut))).toEqual({ frames: whole, rest: 0 });
    }
  });

  it('returns only the first of back-to-back frames', () => {
    const r = nextH02Frame(cat(SHORT, SENTENCE));
    expect(r.kind === 'frame' && h(r.frame)).toBe(h(SHORT));
    const t = nextH02Frame(cat(SENTENCE, SHORT));
    expect(t.kind === 'frame' && t.consumed).toBe(SENTENCE.length);
  });

  it('skips line noise and newlines up to the next marker', () => {
    expect(nextH02Frame(text('\r\nnoise*HQ'))).toEqual({ kind: 'skip', consumed: 7 });
    expect(nextH02Frame(text('\r\n'))).toEqual({ kind: 'skip', consumed: 2 });
    expect(feed(text('AT+OK\r\n'), SENTENCE, text('\n\n'))).toEqual({ frames: [h(SENTENCE)], rest: 0 });
    expect(nextH02Frame(new Uint8Array(0)).kind).toBe('incomplete');
  });
});
