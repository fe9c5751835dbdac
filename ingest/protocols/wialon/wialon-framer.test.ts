import { describe, expect, it } from 'vitest';
import { feedFramer } from '../../conformance/feed-framer.ts';
import { cutFrame } from '../../frame-cutter.ts';
import { wialon } from './wialon.ts';
import { nextWialonFrame } from './wialon-framer.ts';

const text = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const str = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

const LOGIN = '#L#2.0;42001300083;;CE45';
const DATA = '#D#220323;114150;2234.80479;N;11354.87786;E;0;NA;59;11;NA;NA;NA;;NA;d_battr:1:94,d_csq:1:21,di_light:1:1;E7C9';
const PING = '#P#';

const feed = (...chunks: Uint8Array[]) => feedFramer(wialon, chunks, str);

describe('wialon framer', () => {
  it('waits for the line end of a packet cut at any point', () => {
    for (const packet of [LOGIN, DATA, PING]) {
      const line = `${packet}\r\n`;
      for (let cut = 1; cut < line.length - 1; cut++) expect(nextWialonFrame(text(line.slice(0, cut))).kind).toBe('incomplete');
    }
    expect(nextWialonFrame(new Uint8Array(0)).kind).toBe('incomplete');
  });

  it('cuts one line without its \\r\\n, consuming the line end', () => {
    const r = nextWialonFrame(text(`${DATA}\r\n${PING}\r\n`));
    expect(r.kind === 'frame' && [str(r.frame), r.consumed]).toEqual([DATA, DATA.length + 2]);
    // A bare \n ends a line too.
    const bare = nextWialonFrame(text(`${PING}\n`));
    expect(bare.kind === 'frame' && [str(bare.frame), bare.consumed]).toEqual([PING, 4]);
  });

  it('cuts the same packets from a stream split at every point', () => {
    const stream = text(`${LOGIN}\r\n${DATA}\r\n${PING}\r\n`);
    const whole = { frames: [LOGIN, DATA, PING], rest: 0 };
    expect(feed(stream)).toEqual(whole);
    for (let cut = 1; cut < stream.length; cut++) expect(feed(stream.subarray(0, cut), stream.subarray(cut))).toEqual(whole);
  });

  it('skips blank line ends and NUL padding, and cuts a garbage line for the decoder to refuse', () => {
    expect(nextWialonFrame(text('\r\n\r\n#P#'))).toEqual({ kind: 'skip', consumed: 4 });
    expect(nextWialonFrame(text('\0\0\n'))).toEqual({ kind: 'skip', consumed: 3 });
    expect(feed(text('\r\n\0garbage\r\n'), text(`${PING}\r\n`))).toEqual({ frames: ['garbage', PING], rest: 0 });
    expect(feed(text('\xff\x01junk\n#P#\r\n')).frames).toEqual(['\xff\x01junk', PING]);
  });

  it('refuses a line longer than the maximum frame length', () => {
    const max = wialon.maxFrameBytes;
    const long = text(`#B#${'x'.repeat(max)}`);
    expect(cutFrame(wialon, long).kind).toBe('invalid');
    const fits = text(`#B#${'x'.repeat(max - 6)}\r\n`);
    expect(fits.length).toBe(max - 1);
    expect(cutFrame(wialon, fits).kind).toBe('frame');
    expect(cutFrame(wialon, text(`#B#${'x'.repeat(max)}\r\n`)).kind).toBe('invalid');
  });
});
