import { describe, expect, it } from 'vitest';
import { feedFramer } from '../../conformance/feed-framer.ts';
import { cutFrame } from '../../frame-cutter.ts';
import { corpusSamples } from '../../conformance/corpus.ts';
import { suntech } from './suntech.ts';
import { nextSuntechFrame } from './suntech-framer.ts';

const text = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const str = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

const STATUS = 'ST300STT;100850000;01;010;20081017;07:41:56;00100;+37.478519;+126.886819;000.012;000.00;9;1;0;15.30;001100;1;0';
const UNIVERSAL = 'STT;0560001616;BFFFFF;56;1.0.15;1;20200219;20:52:25;00008D6C;334;20;0925;24;+20.741764;-103.430364;0.00;0.00;19;1;00000001;00000000;2;1;1765;00008003;0.0;12.14;136598';
const EXTENDED = 'ST300UEX;511248287;45;311;20220701;18:42:08;14c943;-22.975257;-043.373065;000.000;000.00;0;0;0;12.14;100010;19;RFID:008FB2BEBA39\r\n;3E;000135;4.1;1;00000000000000;0';
// The 0x81 binary report of the corpus (testDecode #21).
const BINARY = corpusSamples('suntech').find((s) => s.test_method === 'testDecode' && s.order === 21)!.payload;

const feed = (...chunks: Uint8Array[]) => feedFramer(suntech, chunks, str);

describe('suntech framer', () => {
  it('needs more bytes until the closing \\r', () => {
    for (const message of [STATUS, UNIVERSAL]) {
      for (let cut = 1; cut <= message.length; cut++) expect(nextSuntechFrame(text(message.slice(0, cut))).kind).toBe('incomplete');
    }
    expect(nextSuntechFrame(new Uint8Array(0)).kind).toBe('incomplete');
  });

  it('cuts a message at \\r and drops the \\r', () => {
    expect(nextSuntechFrame(text(`${STATUS}\r${UNIVERSAL}\r`))).toEqual({ kind: 'frame', frame: text(STATUS), consumed: STATUS.length + 1 });
  });

  it('keeps the \\r\\n inside UEX extended data, which a ; follows', () => {
    const r = nextSuntechFrame(text(`${EXTENDED}\r`));
    expect(r.kind === 'frame' && str(r.frame)).toBe(EXTENDED);
  });

  it('cuts the same messages from a stream split at every point', () => {
    const stream = text(`${STATUS}\r\n${UNIVERSAL}\r${STATUS}\r`);
    const whole = { frames: [STATUS, UNIVERSAL, STATUS], rest: 0 };
    expect(feed(stream)).toEqual(whole);
    for (let cut = 1; cut < stream.length; cut++) {
      const split = feed(stream.subarray(0, cut), stream.subarray(cut));
      expect(split.frames).toEqual(whole.frames);
    }
  });

  it('frames binary universal reports by their length field', () => {
    const bytes = Buffer.from(BINARY, 'hex');
    const r = nextSuntechFrame(bytes);
    expect(r.kind === 'frame' && [Buffer.from(r.frame).toString('hex'), r.consumed]).toEqual([BINARY, bytes.length]);
    expect(nextSuntechFrame(bytes.subarray(0, 2)).kind).toBe('incomplete');
    expect(nextSuntechFrame(bytes.subarray(0, 40))).toEqual({ kind: 'incomplete', frameBytes: bytes.length });
  });

  it('skips garbage up to the next message', () => {
    expect(nextSuntechFrame(text('\n\x00\xff;12ST300'))).toEqual({ kind: 'skip', consumed: 6 });
    expect(feed(text('\x00\xff\n;;'), text(`${STATUS}\r`))).toEqual({ frames: [STATUS], rest: 0 });
  });

  it('refuses a message longer than maxFrameBytes', () => {
    const long = text(`ST300STT;${'1'.repeat(suntech.maxFrameBytes + 10)}`);
    expect(cutFrame(suntech, long).kind).toBe('invalid');
  });
});
