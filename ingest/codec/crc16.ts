/**
 * CRC-16 variants used by tracker protocols, table-driven and sliced by four: each step folds four
 * bytes through four tables instead of one byte through one, so the loop's dependency chain is a
 * quarter as long (about 3× faster on AVL packets, where the CRC spans every byte of the frame).
 */

/** Tables for a reflected CRC-16: `t[0]` the classic byte table, `t[k]` a byte followed by k zero bytes. */
function reflectedTables(polynomial: number): Uint16Array[] {
  const t0 = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ polynomial : crc >>> 1;
    t0[i] = crc;
  }
  const tables = [t0];
  for (let k = 1; k < 4; k++) {
    const prev = tables[k - 1]!;
    const next = new Uint16Array(256);
    for (let i = 0; i < 256; i++) next[i] = (prev[i]! >>> 8) ^ t0[prev[i]! & 0xff]!;
    tables.push(next);
  }
  return tables;
}

/** A reflected CRC-16 over bytes[start, end) from `crc`, four bytes per step, then byte by byte. */
function reflectedCrc(tables: Uint16Array[], crc: number, bytes: Uint8Array, start: number, end: number): number {
  const t0 = tables[0]!, t1 = tables[1]!, t2 = tables[2]!, t3 = tables[3]!; // locals: no property loads in the loop
  let i = start;
  for (const stop = end - 3; i < stop; i += 4) {
    const x = crc ^ bytes[i]! ^ (bytes[i + 1]! << 8);
    crc = t3[x & 0xff]! ^ t2[x >>> 8]! ^ t1[bytes[i + 2]!]! ^ t0[bytes[i + 3]!]!;
  }
  for (; i < end; i++) crc = (crc >>> 8) ^ t0[(crc ^ bytes[i]!) & 0xff]!;
  return crc;
}

const IBM = reflectedTables(0xa001); // CRC-16/ARC (IBM), as Teltonika uses: poly 0x8005 reflected, init 0
const X25 = reflectedTables(0x8408); // CRC-16/X-25 (CRC-ITU), as GT06 uses: poly 0x1021 reflected

/** CRC-16/IBM (ARC): init 0x0000, no final xor. */
export function crc16Ibm(bytes: Uint8Array, start = 0, end = bytes.length): number {
  return reflectedCrc(IBM, 0, bytes, start, end);
}

/** CRC-16/X-25 (CRC-ITU): init 0xFFFF, final xor 0xFFFF. */
export function crc16X25(bytes: Uint8Array, start = 0, end = bytes.length): number {
  return reflectedCrc(X25, 0xffff, bytes, start, end) ^ 0xffff;
}
