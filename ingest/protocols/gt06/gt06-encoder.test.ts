import { describe, expect, it } from 'vitest';
import { crc16X25 } from '../../codec/crc16.ts';
import { encodeCommand } from './gt06-encoder.ts';
import { nextGt06Frame } from './gt06-framer.ts';

describe('gt06 encodeCommand', () => {
  it('builds an 0x80 frame for Relay,1# with length, server flag, text, language, serial and CRC', () => {
    const frame = encodeCommand('Relay,1#', 0x0102, 0xdeadbeef);
    const text = Buffer.from('Relay,1#', 'ascii');
    expect([...frame.subarray(0, 2)]).toEqual([0x78, 0x78]);
    expect(frame[2]).toBe(frame.length - 5); // type .. CRC
    expect(frame[3]).toBe(0x80);
    expect(frame[4]).toBe(4 + text.length);
    expect(Buffer.from(frame.subarray(5, 9)).toString('hex')).toBe('deadbeef');
    expect(Buffer.from(frame.subarray(9, 9 + text.length)).equals(text)).toBe(true);
    expect([...frame.subarray(9 + text.length, 11 + text.length)]).toEqual([0x00, 0x02]);
    expect([...frame.subarray(11 + text.length, 13 + text.length)]).toEqual([0x01, 0x02]);
    const crc = crc16X25(frame, 2, frame.length - 4);
    expect([frame[frame.length - 4], frame[frame.length - 3]]).toEqual([crc >> 8, crc & 0xff]);
    expect([...frame.subarray(frame.length - 2)]).toEqual([0x0d, 0x0a]);
  });

  it('produces a frame our own framer cuts whole', () => {
    const frame = encodeCommand('DYD,000000#', 7);
    const result = nextGt06Frame(frame);
    expect(result.kind).toBe('frame');
    if (result.kind === 'frame') expect(result.consumed).toBe(frame.length);
  });

  it('switches to the 0x7979 frame when the text does not fit a 1-byte length', () => {
    const frame = encodeCommand('X'.repeat(245), 1);
    expect([frame[0], frame[1]]).toEqual([0x79, 0x79]);
    expect((frame[2]! << 8) | frame[3]!).toBe(frame.length - 6);
    const crc = crc16X25(frame, 2, frame.length - 4);
    expect((frame[frame.length - 4]! << 8) | frame[frame.length - 3]!).toBe(crc);
  });
});
