import { MalformedFrameError } from '../../malformed-frame-error.ts';

/**
 * Bounds-checked big-endian cursor over one frame's body. Every read past the end throws
 * MalformedFrameError, so a truncated or lying frame can never surface as a RangeError.
 */
export class Gt06Reader {
  pos: number;

  constructor(
    readonly bytes: Uint8Array,
    start: number,
    readonly end: number,
  ) {
    if (start < 0 || end > bytes.length || start > end) throw new MalformedFrameError('gt06: frame body out of range');
    this.pos = start;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  private need(n: number): number {
    if (n < 0 || this.pos + n > this.end) throw new MalformedFrameError(`gt06: need ${n} bytes at ${this.pos}, frame body ends at ${this.end}`);
    const at = this.pos;
    this.pos += n;
    return at;
  }

  u8(): number {
    return this.bytes[this.need(1)]!;
  }

  u16(): number {
    const at = this.need(2);
    return (this.bytes[at]! << 8) | this.bytes[at + 1]!;
  }

  i16(): number {
    const v = this.u16();
    return v & 0x8000 ? v - 0x10000 : v;
  }

  u24(): number {
    const at = this.need(3);
    return (this.bytes[at]! << 16) | (this.bytes[at + 1]! << 8) | this.bytes[at + 2]!;
  }

  u32(): number {
    const at = this.need(4);
    return ((this.bytes[at]! << 24) >>> 0) + ((this.bytes[at + 1]! << 16) | (this.bytes[at + 2]! << 8) | this.bytes[at + 3]!);
  }

  /** Little-endian uint32: a few Concox modules (odometer, event time) use it. */
  u32le(): number {
    const at = this.need(4);
    return ((this.bytes[at + 3]! << 24) >>> 0) + ((this.bytes[at + 2]! << 16) | (this.bytes[at + 1]! << 8) | this.bytes[at]!);
  }

  skip(n: number): void {
    this.need(n);
  }

  take(n: number): Uint8Array {
    const at = this.need(n);
    return this.bytes.subarray(at, at + n);
  }

  peek(offset = 0): number | undefined {
    const at = this.pos + offset;
    return at < this.end ? this.bytes[at] : undefined;
  }
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function ascii(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

/** True when every byte is printable ASCII or CR/LF, i.e. the device sent text rather than binary. */
export function isText(bytes: Uint8Array): boolean {
  for (const b of bytes) if (!((b >= 0x20 && b < 0x7f) || b === 0x0d || b === 0x0a)) return false;
  return bytes.length > 0;
}
