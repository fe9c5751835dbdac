import { MalformedFrameError } from '../malformed-frame-error.ts';

/**
 * Reads over a frame with bounds checks: a truncated or lying frame ends in one MalformedFrameError,
 * never in a RangeError from deep inside a decoder. Big-endian unless told otherwise (Meitrack's
 * binary records are little-endian).
 */
export class ByteReader {
  /** Only for floats and 64-bit values (rare fields); integers are assembled from bytes, so a reader per frame costs no DataView. */
  private view: DataView | undefined;
  offset: number;

  constructor(
    readonly bytes: Uint8Array,
    offset = 0,
    /** Reads stop here (a record end, a checksum trailer), not necessarily at the end of the bytes. */
    readonly end = bytes.length,
    private readonly littleEndian = false,
  ) {
    if (offset < 0 || end > bytes.length || offset > end) throw new MalformedFrameError(`frame part ${offset}..${end} out of range`);
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

  private dataView(): DataView {
    return (this.view ??= new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength));
  }

  u8(): number {
    return this.bytes[this.take(1)]!;
  }
  i8(): number {
    return (this.bytes[this.take(1)]! << 24) >> 24;
  }
  u16(): number {
    const at = this.take(2);
    const b = this.bytes;
    return this.littleEndian ? b[at]! | (b[at + 1]! << 8) : (b[at]! << 8) | b[at + 1]!;
  }
  i16(): number {
    return (this.u16() << 16) >> 16;
  }
  u24(): number {
    const at = this.take(3);
    const b = this.bytes;
    return this.littleEndian ? b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) : (b[at]! << 16) | (b[at + 1]! << 8) | b[at + 2]!;
  }
  u32(): number {
    return this.i32() >>> 0;
  }
  i32(): number {
    const at = this.take(4);
    return this.littleEndian ? int32le(this.bytes, at) : int32be(this.bytes, at);
  }
  f32(): number {
    return this.dataView().getFloat32(this.take(4), this.littleEndian);
  }
  u64(): bigint {
    return this.dataView().getBigUint64(this.take(8), this.littleEndian);
  }
  /** A little-endian uint32 in a big-endian frame: some GT06 modules (odometer, event time) use it. */
  u32le(): number {
    return int32le(this.bytes, this.take(4)) >>> 0;
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

function int32be(b: Uint8Array, at: number): number {
  return (b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!;
}

function int32le(b: Uint8Array, at: number): number {
  return b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24);
}
