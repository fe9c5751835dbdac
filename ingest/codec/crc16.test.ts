import { describe, expect, it } from 'vitest';
import { crc16Ibm, crc16X25 } from './crc16.ts';

// Check values from the CRC catalogue: CRC of the ASCII bytes "123456789".
const check = new TextEncoder().encode('123456789');

/** The reflected CRC one bit at a time, as the standards define it. */
function bitwise(polynomial: number, init: number, bytes: Uint8Array): number {
  let crc = init;
  for (const b of bytes) {
    crc ^= b;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ polynomial : crc >>> 1;
  }
  return crc;
}

describe('crc16', () => {
  it('CRC-16/ARC (IBM) of "123456789" is 0xBB3D', () => expect(crc16Ibm(check)).toBe(0xbb3d));
  it('CRC-16/X-25 of "123456789" is 0x906E', () => expect(crc16X25(check)).toBe(0x906e));
  it('agrees with the bit-by-bit definition at every length and start (the four-byte steps and the tail)', () => {
    const bytes = Uint8Array.from({ length: 40 }, (_, i) => (i * 73 + 5) & 0xff);
    for (let start = 0; start < 4; start++) {
      for (let end = start; end <= bytes.length; end++) {
        expect(crc16Ibm(bytes, start, end)).toBe(bitwise(0xa001, 0, bytes.subarray(start, end)));
        expect(crc16X25(bytes, start, end)).toBe(bitwise(0x8408, 0xffff, bytes.subarray(start, end)) ^ 0xffff);
      }
    }
  });
  it('honours start and end', () => {
    const padded = new Uint8Array([0xff, ...check, 0xee]);
    expect(crc16Ibm(padded, 1, 10)).toBe(0xbb3d);
    expect(crc16X25(padded, 1, 10)).toBe(0x906e);
  });
});
