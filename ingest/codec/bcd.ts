/** Packed BCD digits (two per byte, high nibble first), as GT06 logins carry the IMEI. */
export function bcdDigits(bytes: Uint8Array, start: number, end: number): string {
  let digits = '';
  for (let i = start; i < end; i++) {
    const b = bytes[i]!;
    digits += String.fromCharCode(48 + (b >> 4), 48 + (b & 0x0f));
  }
  return digits;
}
