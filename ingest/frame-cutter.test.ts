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
const cat = (...parts: Uint8Array[]) => Uint8Array.from(Buffer.concat(parts));

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

/** A Meitrack frame of exactly `bytes` bytes: its length counts every byte after the length digits. */
function meitrackFrame(bytes: number): Uint8Array {
  for (let digits = 1; digits < 8; digits++) {
    const length = bytes - 3 - digits;
    if (String(length).length === digits) return ascii(`$$A${length},${filler(length - 1)}`);
  }
  throw new Error(`no Meitrack frame is ${bytes} bytes long`);
}

/** The bytes of a frame up to and including `byte`, the end of its header. */
const headerUpTo = (byte: number, frame: Uint8Array) => frame.subarray(0, frame.indexOf(byte) + 1);

interface Case {
  protocol: Protocol;
  /** A whole frame of a given size. */
  frameOf(bytes: number): Uint8Array;
  /** The first bytes of a frame whose header declares `bytes`, when the protocol has a length field. */
  headerOf?(bytes: number): Uint8Array;
  /** `bytes` bytes that start a frame and never end it. */
  runawayOf?(bytes: number): Uint8Array;
}

const CASES: Case[] = [
  { protocol: teltonika, frameOf: teltonikaPacket, headerOf: (bytes) => teltonikaPacket(bytes).subarray(0, 8) },
  {
    protocol: gt06,
    frameOf: gt06Frame,
    headerOf: (bytes) => gt06Frame(bytes).subarray(0, 6),
    // Declares 3 bytes, but the CR LF that would end it never comes.
    runawayOf: (bytes) => Buffer.alloc(bytes, 0x55).fill(0x78, 0, 2).fill(0x03, 2, 3),
  },
  { protocol: h02, frameOf: delimited('*HQ,', '#'), runawayOf: (bytes) => ascii(`*HQ,${filler(bytes - 4)}`) },
  { protocol: gl200, frameOf: delimited('+RESP:GTFRI,', '$'), runawayOf: (bytes) => ascii(`+RESP:${filler(bytes - 6)}`) },
  {
    protocol: meitrack,
    frameOf: meitrackFrame,
    headerOf: (bytes) => headerUpTo(0x2c, meitrackFrame(bytes)),
    // A length whose digits never end.
    runawayOf: (bytes) => ascii(`$$A${'0'.repeat(bytes - 3)}`),
  },
  { protocol: tk103, frameOf: delimited('(012345678901BR00', ')'), runawayOf: (bytes) => ascii(`(0123${filler(bytes - 5)}`) },
];

const named = (cases: Case[]) => cases.map((c) => [c.protocol.name, c] as const);
const tooLong = (c: Case, bytes: number) => ({
  kind: 'invalid',
  reason: `${c.protocol.name}: frame of ${bytes} bytes is longer than the ${c.protocol.maxFrameBytes} allowed`,
});

describe('cutFrame: one maximum frame size, for every protocol', () => {
  it.each(named(CASES))('%s: passes a frame exactly as long as the maximum, and refuses one a byte longer', (_, c) => {
    const max = c.protocol.maxFrameBytes;
    expect(cutFrame(c.protocol, c.frameOf(max))).toMatchObject({ kind: 'frame', consumed: max });
    expect(cutFrame(c.protocol, c.frameOf(max + 1))).toEqual(tooLong(c, max + 1));
  });

  it.each(named(CASES))('%s: cuts a whole frame from a buffer that holds more than the maximum', (_, c) => {
    const max = c.protocol.maxFrameBytes;
    expect(cutFrame(c.protocol, cat(c.frameOf(max), c.frameOf(max)))).toMatchObject({ kind: 'frame', consumed: max });
  });

  it.each(named(CASES.filter((c) => c.headerOf)))('%s: refuses a frame as soon as its header declares more than the maximum', (_, c) => {
    const max = c.protocol.maxFrameBytes;
    expect(cutFrame(c.protocol, c.headerOf!(max))).toMatchObject({ kind: 'incomplete' });
    expect(cutFrame(c.protocol, c.headerOf!(max + 1))).toEqual(tooLong(c, max + 1));
  });

  it.each(named(CASES.filter((c) => c.runawayOf)))('%s: refuses a stream once it passes the maximum without a frame end, not before', (_, c) => {
    const max = c.protocol.maxFrameBytes;
    expect(cutFrame(c.protocol, c.runawayOf!(max))).toMatchObject({ kind: 'incomplete' });
    expect(cutFrame(c.protocol, c.runawayOf!(max + 1))).toEqual({
      kind: 'invalid',
      reason: `${c.protocol.name}: ${max + 1} bytes without a frame end, more than the ${max} allowed`,
    });
  });
});
