import { crc16Kermit } from '../../ingest/protocols/ruptela/ruptela-crc.ts';
import { crc16 as wialonCrc } from '../../ingest/protocols/wialon/wialon-fields.ts';

/**
 * Real device captures (ingest/conformance/corpus/, the protocols' decoder tests) made current: the
 * device id is the test device's and the clock reads the time a test chooses, so fixes are fresh
 * enough for the engine and the safe-stop rule. Every other byte is the capture's; where a protocol
 * checks its packet (Wialon 2.0's CRC, Ruptela's), the checksum is recomputed with the folder's own.
 */

const two = (n: number) => String(n).padStart(2, '0');
const parts = (at: Date) => ({
  yy: two(at.getUTCFullYear() % 100), yyyy: String(at.getUTCFullYear()), mo: two(at.getUTCMonth() + 1), dd: two(at.getUTCDate()),
  hh: two(at.getUTCHours()), mi: two(at.getUTCMinutes()), ss: two(at.getUTCSeconds()),
});

/** Coban's clocks: the local `yymmddhhmmss` (the tracker set to UTC) and the fix's UTC `hhmmss.sss`. */
export function gps103Clock(at: Date): { local: string; utc: string } {
  const p = parts(at);
  return { local: `${p.yy}${p.mo}${p.dd}${p.hh}${p.mi}${p.ss}`, utc: `${p.hh}${p.mi}${p.ss}.000` };
}

/** The `*`-ended alternative format's UTC `hhmmss` and `ddmmyy`. */
export function gps103AlternativeClock(at: Date): { time: string; date: string } {
  const p = parts(at);
  return { time: `${p.hh}${p.mi}${p.ss}`, date: `${p.dd}${p.mo}${p.yy}` };
}

/** Wialon IPS `ddmmyy;hhmmss`. */
export function wialonClock(at: Date): string {
  const p = parts(at);
  return `${p.dd}${p.mo}${p.yy};${p.hh}${p.mi}${p.ss}`;
}

/**
 * A Wialon IPS 2.0 packet: `#TYPE#body;` and the CRC-16 of the body up to the separator, as 4 hex
 * digits. A device computes it over the bytes it sends, which are UTF-8 (parameter names in Cyrillic).
 */
export function wialonPacket(type: string, body: string, separator = ';'): string {
  const covered = `${body}${separator}`;
  const crc = wialonCrc(Buffer.from(covered, 'utf8').toString('latin1'));
  return `#${type}#${covered}${crc.toString(16).toUpperCase().padStart(4, '0')}\r\n`;
}

/** Suntech `yyyymmdd;hh:mm:ss`. */
export function suntechClock(at: Date): string {
  const p = parts(at);
  return `${p.yyyy}${p.mo}${p.dd};${p.hh}:${p.mi}:${p.ss}`;
}

/** Watch `ddmmyy,hhmmss`. */
export function watchClock(at: Date): string {
  const p = parts(at);
  return `${p.dd}${p.mo}${p.yy},${p.hh}${p.mi}${p.ss}`;
}

/** A watch frame `[MF*id*LLLL*content]`, the length being the content's, in 4 hex digits. */
export function watchFrame(manufacturer: string, id: string, content: string): string {
  return `[${manufacturer}*${id}*${content.length.toString(16).toUpperCase().padStart(4, '0')}*${content}]`;
}

/**
 * A Ruptela device packet re-addressed: the 8-byte IMEI after the length, the first record's time
 * (right after the records-left and count bytes of a records packet) when given, and the CRC-16/KERMIT
 * of everything between the length and the CRC recomputed.
 */
export function ruptelaPacket(captureHex: string, imei: string, firstRecordAt?: Date): Buffer {
  const packet = Buffer.from(captureHex, 'hex');
  packet.writeBigUInt64BE(BigInt(imei), 2);
  if (firstRecordAt) packet.writeUInt32BE(Math.floor(firstRecordAt.getTime() / 1000), 2 + 8 + 1 + 2);
  packet.writeUInt16BE(crc16Kermit(packet, 2, packet.length - 2), packet.length - 2);
  return packet;
}

/** A Ruptela device packet built from its parts: length, IMEI, command id, payload, CRC-16/KERMIT. */
export function ruptelaDevicePacket(imei: string, type: number, payload: Uint8Array = new Uint8Array()): Buffer {
  const body = Buffer.concat([Buffer.alloc(8), Buffer.from([type]), payload]);
  body.writeBigUInt64BE(BigInt(imei), 0);
  const out = Buffer.alloc(2 + body.length + 2);
  out.writeUInt16BE(body.length, 0);
  body.copy(out, 2);
  out.writeUInt16BE(crc16Kermit(body), 2 + body.length);
  return out;
}
