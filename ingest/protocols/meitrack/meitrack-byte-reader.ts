import { MalformedFrameError } from '../../malformed-frame-error.ts';

/** Little-endian reads over a frame that throw MalformedFrameError instead of reading past the end. */
export class MeitrackByteReader {
  constructor(
    readonly bytes: Uint8Array,
    public offset: number,
    /** Reads stop here (a record end or the `*XX\r\n` trailer), not at the end of the frame. */
    public limit: number = bytes.length,
  ) {}

  get remaining(): number {
    return this.limit - this.offset;
  }

  private take(n: number): number {
    if (n < 0 || this.offset + n > this.limit) throw new MalformedFrameError(`Meitrack binary field runs past its end at byte ${this.offset}`);
    const at = this.offset;
    this.offset += n;
    return at;
  }

  u8(): number {
    return this.bytes[this.take(1)]!;
  }

  peekU8(): number {
    if (this.offset >= this.limit) throw new MalformedFrameError('Meitrack binary record ends early');
    return this.bytes[this.offset]!;
  }

  u16(): number {
    const at = this.take(2);
    return this.bytes[at]! | (this.bytes[at + 1]! << 8);
  }

  i16(): number {
    const v = this.u16();
    return v >= 0x8000 ? v - 0x10000 : v;
  }

  u32(): number {
    const at = this.take(4);
    return (this.bytes[at]! | (this.bytes[at + 1]! << 8) | (this.bytes[at + 2]! << 16)) + this.bytes[at + 3]! * 0x1000000;
  }

  i32(): number {
    const v = this.u32();
    return v >= 0x80000000 ? v - 0x100000000 : v;
  }

  slice(n: number): Uint8Array {
    const at = this.take(n);
    return this.bytes.subarray(at, at + n);
  }
}
