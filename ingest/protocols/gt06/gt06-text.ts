/** Text views of frame bytes, as GT06 messages mix binary fields and ASCII. */
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
