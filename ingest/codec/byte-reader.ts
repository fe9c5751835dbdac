import { MalformedFrameError } from '../malformed-frame-error.ts';

/**
 * Reads over a frame with bounds checks: a truncated or lying frame ends in one MalformedFrameError,
 * never in a RangeError from deep inside a decoder. Big-endian unless told otherwise (Meitrack's
 * binary records are little-endian).
 */
export class ByteReader {
  private readonly view: DataView;
  offset: number;

  constructor(
    readonly bytes: Uint8Array,
    offset = 0,
    /** Reads stop here (a record end, a checksum trailer), not necessarily at the end of the bytes. */
    readonly end = bytes.length,
    private readonly littleEndian = false,
  ) {
    if (offset < 0 || end > bytes.length || offset > end) throw new MalformedFrameError(`frame part ${offset}..${end} out of range`);
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
    return this.view.getUint16(this.take(2), this.littleEndian);
  }
  i16(): number {
    return this.view.getInt16(this.take(2), this.littleEndian);
  }
  u24(): number {
    const at = this.take(3);
    const b = this.bytes;
    return this.littleEndian ? b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) : (b[at]! << 16) | (b[at + 1]! << 8) | b[at + 2]!;
  }
  u32(): number {
    return this.view.getUint32(this.take(4), this.littleEndian);
  }
  i32(): number {
    return this.view.getInt32(this.take(4), this.littleEndian);
  }
  f32(): number {
    return this.view.getFloat32(this.take(4), this.littleEndian);
  }
  u64(): bigint {
    return this.view.getBigUint64(this.take(8), this.littleEndian);
  }
  /** A little-endian uint32 in a big-endian frame: some GT06 modules (odometer, event time) use it. */
  u32le(): number {
    return this.view.getUint32(this.take(4), true);
  }
  /** The byte `ahead` positions on, without moving; undefined past the end. */
  peek(ahead = 0): number | undefined {
    const at = this.offset + ahead;
    return at < this.end ? this.bytes[at] : undefined;
  }
  peekU8(): number {
    if (this.offset >= this.end) throw new MalformedFrameError(`frame ends early at offset ${this.offset}`);
    return this.bytes[this.offset]!;
  }
  slice(n: number): Uint8Array {
    const at = this.take(n);
    return this.bytes.subarray(at, at + n);
  }
  skip(n: number): void {
    this.take(n);
  }
}
