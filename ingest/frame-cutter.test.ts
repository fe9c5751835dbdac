import { describe, expect, it } from 'vitest';
import { cutFrame } from './frame-cutter.ts';
import type { Protocol } from './protocol.ts';
import { gl200 } from './protocols/gl200/gl200.ts';
import { gt06 } from './protocols/gt06/gt06.ts';
import { h02 } from './protocols/h02/h02.ts';
import { meitrack } from './protocols/meitrack/meitrack.ts';
import { teltonika } from './protocols/teltonika/teltonika.ts';
import { tk103 } from './protocols/tk103/tk103.ts';

const ascii = (s: string) => Buffer.from(s, 'latin1');
const filler = (n: number) => 'x'.repeat(n);

/** A text frame of exactly `bytes` bytes: start marker, filler, end marker. */
const delimited = (start: string, end: string) => (bytes: number) => ascii(`${start}${filler(bytes - start.length - end.length)}${end}`);

/** A Teltonika AVL packet of exactly `bytes` bytes (the framer does not read the data or its CRC). */
function teltonikaPacket(bytes: number): Uint8Array {
  const packet = Buffer.alloc(bytes);
  packet.writeUInt32BE(bytes - 12, 4);
  return packet;
}

/** A GT06 long frame (0x7979, 2-byte length) of exactly `bytes` bytes, ending CR LF. */
function gt06Frame(bytes: number): Uint8Array {
  const frame = Buffer.alloc(bytes, 0x11);
  frame.set([0x79, 0x79]);
  frame.writeUInt16BE(bytes - 6, 2);
  frame.set([0x0d, 0x0a], bytes - 2);
  return frame;
}

interface Case {
  protocol: Protocol;
  /** A whole frame of a given size. */
  frameOf(bytes: number): Uint8Array;
  /** The first bytes of a frame whose header declares `bytes`, when the protocol has a length field. */
  headerOf?(bytes: number): Uint8Array;
  /** A frame start followed by `bytes` bytes that never end it, when frames end with a delimiter. */
  runawayOf?(bytes: number): Uint8Array;
}

const CASES: Case[] = [
  { protocol: teltonika, frameOf: teltonikaPacket, headerOf: (bytes) => teltonikaPacket(bytes).subarray(0, 8) },
  { protocol: gt06, frameOf: gt06Frame, headerOf: (bytes) => gt06Frame(bytes).subarray(0, 6), runawayOf: (bytes) => Buffer.alloc(bytes, 0x55).fill(0x78, 0, 2).fill(0x03, 2, 3) },
  { protocol: h02, frameOf: delimited('*HQ,', '#'), runawayOf: (bytes) => ascii(`*HQ,${filler(bytes - 4)}`) },
  { protocol: gl200, frameOf: delimited('+RESP:GTFRI,', '$'), runawayOf: (bytes) => ascii(`+RESP:${filler(bytes - 6)}`) },
  { protocol: tk103, frameOf: delimited('(012345678901BR00', ')'), runawayOf: (bytes) => ascii(`(0123${filler(bytes - 5)}`) },
];

describe('cutFrame: one maximum frame size, for every protocol', () => {
  describe.each(CASES.map((c) => [c.protocol.name, c] as const))('%s', (_, c) => {
    const max = c.protocol.maxFrameBytes;

    it('passes a frame exactly as long as the maximum, and refuses one a byte longer', () => {
      expect(cutFrame(c.protocol, c.frameOf(max))).toMatchObject({ kind: 'frame', consumed: max });
      const over = cutFrame(c.protocol, c.frameOf(max + 1));
      expect(over).toEqual({ kind: 'invalid', reason: `${c.protocol.name}: frame of ${max + 1} bytes is longer than the ${max} allowed` });
    });

    it.skipIf(!c.headerOf)('refuses a frame whose header declares more than the maximum before its body arrives', () => {
      expect(cutFrame(c.protocol, c.headerOf!(max)).kind).toBe('incomplete');
      expect(cutFrame(c.protocol, c.headerOf!(max + 1)).kind).toBe('invalid');
    });

    it.skipIf(!c.runawayOf)('refuses a stream that passes the maximum without a frame end, and waits until then', () => {
      expect(cutFrame(c.protocol, c.runawayOf!(max)).kind).toBe('incomplete');
      expect(cutFrame(c.protocol, c.runawayOf!(max + 1))).toEqual({ kind: 'invalid', reason: `${c.protocol.name}: no frame end within the ${max} bytes allowed` });
    });
  });

  it('meitrack: the largest frame four length digits can declare stays within the maximum', () => {
    const frame = ascii(`$$A9999,${filler(9999 - 1)}`);
    expect(frame.length).toBeLessThanOrEqual(meitrack.maxFrameBytes);
    expect(cutFrame(meitrack, frame)).toMatchObject({ kind: 'frame', consumed: frame.length });
  });
});
