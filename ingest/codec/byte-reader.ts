import { MalformedFrameError } from '../malformed-frame-error.ts';

/**
 * Big-endian reads over a frame with bounds checks: a truncated or lying frame ends in one
 * MalformedFrameError, never in a RangeError from deep inside a decoder.
 */
export class ByteReader {
  private readonly view: DataView;
  offset: number;

  constructor(
    readonly bytes: Uint8Array,
    offset = 0,
    readonly end = bytes.length,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.offset = offset;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  private take(n: number): number {
    if (n < 0 || this.offset + n > this.end) {
      throw new MalformedFrameError(`frame ends early: need ${n} byte(s) at offset ${this.offset}, ${this.end - this.offset} left`);
    }
    const at = this.offset;
    this.offset += n;
    return at;
  }

  u8(): number {
    return this.view.getUint8(this.take(1));
  }
  i8(): number {
    return this.view.getInt8(this.take(1));
  }
  u16(): number {
    return this.view.getUint16(this.take(2));
  }
  i16(): number {
    return this.view.getInt16(this.take(2));
  }
  u32(): number {
    return this.view.getUint32(this.take(4));
  }
  i32(): number {
    return this.view.getInt32(this.take(4));
  }
  f32(): number {
    return this.view.getFloat32(this.take(4));
  }
  u64(): bigint {
    return this.view.getBigUint64(this.take(8));
  }
  slice(n: number): Uint8Array {
    const at = this.take(n);
    return this.bytes.subarray(at, at + n);
  }
  skip(n: number): void {
    this.take(n);
  }
}
