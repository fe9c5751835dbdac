import { describe, expect, it } from 'vitest';
import { tk103 } from './tk103.ts';
import { feedFramer } from '../../conformance/feed-framer.ts';
import { nextTk103Frame } from './tk103-framer.ts';

const text = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const str = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

const POSITION = '(088047365460BR00151024A2555.3531S02855.3329E004.7055148276.1701000000L00009AA3)';
const LOGIN = '(352606090042050,BP05,240414,A,4527.3513N,00909.9758E,4.80,112825,155.49)';
const ANSWER = '(864555555555555,ZC03,191117,234207,$1 .Check interval is set to 240 minute(s).\r\n7 . Power: 95%$)';

const feed = (...chunks: Uint8Array[]) => feedFramer(tk103, chunks, str);

describe('tk103 framer', () => {
  it('waits for the rest of a message cut at any point', () => {
    for (const message of [POSITION, LOGIN, ANSWER]) {
      for (let cut = 1; cut < message.length; cut++) expect(nextTk103Frame(text(message.slice(0, cut))).kind).toBe('incomplete');
    }
  });

  it('keeps a parenthesis inside a $-quoted command answer', () => {
    const r = nextTk103Frame(text(ANSWER));
    expect(r.kind === 'frame' && str(r.frame)).toBe(ANSWER);
  });

  it('cuts the same messages from a stream split at every point', () => {
    const stream = text(`${POSITION}\r\n${ANSWER}${LOGIN}\r\n`);
    const whole = { frames: [POSITION, ANSWER, LOGIN], rest: 0 };
    expect(feed(stream)).toEqual(whole);
    for (let cut = 1; cut < stream.length; cut++) expect(feed(stream.subarray(0, cut), stream.subarray(cut))).toEqual(whole);
  });

  it('returns only the first of back-to-back messages', () => {
    const r = nextTk103Frame(text(POSITION + LOGIN));
    expect(r.kind === 'frame' && r.consumed).toBe(POSITION.length);
  });

  it('skips line noise up to the next (', () => {
    expect(nextTk103Frame(text('\r\nAT+OK(0'))).toEqual({ kind: 'skip', consumed: 7 });
    expect(nextTk103Frame(text('garbage'))).toEqual({ kind: 'skip', consumed: 7 });
    expect(feed(text('\x00\xff junk'), text(POSITION), text('\n'))).toEqual({ frames: [POSITION], rest: 0 });
    expect(nextTk103Frame(new Uint8Array(0)).kind).toBe('incomplete');
  });

  it('does not let a stray $ swallow the messages after it', () => {
    expect(feed(text('(012345678901BR00$x)'), text(POSITION)).frames).toEqual(['(012345678901BR00$x)', POSITION]);
  });
});
