import type { ByteReader } from '../../codec/byte-reader.ts';

/** Small readers the JT/T 808 message and item decoders share. */

const latin1 = new TextDecoder('latin1');

/** `n` bytes as text, byte for character: firmwares put ASCII (or vendor bytes) in fixed fields. */
export function text(r: ByteReader, n: number): string {
  return latin1.decode(r.slice(n));
}

/** Text with control characters and spaces cut from both ends, as firmwares pad their fields with NULs. */
export function trimmed(value: string): string {
  return value.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, '');
}

export function hexOf(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}
