import { describe, expect, it } from 'vitest';
import { MalformedFrameError } from '../malformed-frame-error.ts';
import { ByteReader } from './byte-reader.ts';

// Pseudo-random bytes with every high bit pattern, so sign handling is exercised at each offset.
const bytes = Uint8Array.from({ length: 64 }, (_, i) => (i * 167 + 13) & 0xff);
const view = new DataView(bytes.buffer);

describe('ByteReader', () => {
  it.each([false, true])('reads integers as DataView does (little-endian: %s)', (le) => {
    for (let at = 0; at + 8 <= bytes.length; at++) {
      const read = (f: (r: ByteReader) => number | bigint) => f(new ByteReader(bytes, at, bytes.length, le));
      expect(read((r) => r.u8())).toBe(view.getUint8(at));
      expect(read((r) => r.i8())).toBe(view.getInt8(at));
      expect(read((r) => r.u16())).toBe(view.getUint16(at, le));
      expect(read((r) => r.i16())).toBe(view.getInt16(at, le));
      expect(read((r) => r.u32())).toBe(view.getUint32(at, le));
      expect(read((r) => r.i32())).toBe(view.getInt32(at, le));
      expect(read((r) => r.u32le())).toBe(view.getUint32(at, true));
      expect(read((r) => r.f32())).toBe(view.getFloat32(at, le));
      expect(read((r) => r.u64())).toBe(view.getBigUint64(at, le));
    }
  });

  it('reads within a subarray of a larger buffer', () => {
    const r = new ByteReader(bytes.subarray(10, 20), 2);
    expect(r.u16()).toBe(view.getUint16(12));
    expect(r.f32()).toBe(view.getFloat32(14));
  });

  it('throws MalformedFrameError past its end, not past the bytes', () => {
    const r = new ByteReader(bytes, 0, 3);
    r.u16();
    expect(() => r.u16()).toThrow(MalformedFrameError);
    expect(r.u8()).toBe(bytes[2]);
    expect(() => new ByteReader(bytes, 4, 2)).toThrow(MalformedFrameError);
  });
});
