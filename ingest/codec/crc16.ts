/** CRC-16 variants used by tracker protocols, table-driven (one lookup per byte). */

function reflectedTable(polynomial: number): Uint16Array {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ polynomial : crc >>> 1;
    table[i] = crc;
  }
  return table;
}

const IBM = reflectedTable(0xa001); // CRC-16/ARC (IBM), as Teltonika uses: poly 0x8005 reflected, init 0
const X25 = reflectedTable(0x8408); // CRC-16/X-25 (CRC-ITU), as GT06 uses: poly 0x1021 reflected

/** CRC-16/IBM (ARC): init 0x0000, no final xor. */
export function crc16Ibm(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0;
  for (let i = start; i < end; i++) crc = (crc >>> 8) ^ IBM[(crc ^ bytes[i]!) & 0xff]!;
  return crc;
}

/** CRC-16/X-25 (CRC-ITU): init 0xFFFF, final xor 0xFFFF. */
export function crc16X25(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let crc = 0xffff;
  for (let i = start; i < end; i++) crc = (crc >>> 8) ^ X25[(crc ^ bytes[i]!) & 0xff]!;
  return (crc ^ 0xffff) & 0xffff;
}
