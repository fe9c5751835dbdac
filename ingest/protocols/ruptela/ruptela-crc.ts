/** CRC-16/KERMIT (polynomial 0x1021 reflected, initial 0, no final xor), as Ruptela packets carry it. */
export function crc16Kermit(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0;
  for (let i = start; i < end; i++) {
    crc ^= bytes[i]!;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x8408 : crc >>> 1;
  }
  return crc & 0xffff;
}

/**
 * A server packet: 2-byte length, the command id, the content, the CRC of id and content.
 * The server's ids are the device's plus 100 (records are acknowledged with 100 + 0 = 0x64).
 */
export function serverPacket(id: number, content: Uint8Array): Uint8Array {
  const out = new Uint8Array(2 + 1 + content.length + 2);
  const length = 1 + content.length;
  out[0] = length >> 8;
  out[1] = length & 0xff;
  out[2] = id;
  out.set(content, 3);
  const crc = crc16Kermit(out, 2, 3 + content.length);
  out[out.length - 2] = crc >> 8;
  out[out.length - 1] = crc & 0xff;
  return out;
}
