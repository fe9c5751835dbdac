import { describe, expect, it } from 'vitest';
import { crc16Ibm, crc16X25 } from './crc16.ts';

// Check values from the CRC catalogue: CRC of the ASCII bytes "123456789".
const check = new TextEncoder().encode('123456789');

describe('crc16', () => {
  it('CRC-16/ARC (IBM) of "123456789" is 0xBB3D', () => expect(crc16Ibm(check)).toBe(0xbb3d));
  it('CRC-16/X-25 of "123456789" is 0x906E', () => expect(crc16X25(check)).toBe(0x906e));
  it('honours start and end', () => {
    const padded = new Uint8Array([0xff, ...check, 0xee]);
    expect(crc16Ibm(padded, 1, 10)).toBe(0xbb3d);
    expect(crc16X25(padded, 1, 10)).toBe(0x906e);
  });
});
