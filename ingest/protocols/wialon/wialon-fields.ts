import type { AttributeValue } from '../../protocol.ts';

/** Field readings of Wialon IPS packets. */

/** How a packet's text was sent: UTF-8, or a single-byte code page (read as Latin-1). */
export type TextEncoding = 'utf8' | 'latin1';

/**
 * CRC-16 (polynomial 0xA001 reflected, initial 0) that Wialon IPS 2.0 appends as four hex digits,
 * over the text's bytes in the encoding the device sent it (parameter names may be Cyrillic UTF-8).
 */
export function crc16(text: string, encoding: TextEncoding = 'latin1'): number {
  let crc = 0;
  for (const byte of Buffer.from(text, encoding)) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
  }
  return crc;
}

export const CRC_FIELD = /^[0-9A-Fa-f]{4}$/;

/** `NA` and an empty field both mean "not known". */
export function known(field: string | undefined): field is string {
  return field !== undefined && field !== '' && field !== 'NA';
}

/** ddmmyy + hhmmss in UTC, or undefined when either is absent or impossible. */
export function packetTime(date: string | undefined, time: string | undefined): Date | undefined | null {
  if (!known(date) && !known(time)) return undefined;
  const d = /^(\d\d)(\d\d)(\d\d)$/.exec(date ?? '');
  const t = /^(\d\d)(\d\d)(\d\d)(?:\.\d+)?$/.exec(time ?? '');
  if (!d || !t) return null;
  const [day, month, year] = [Number(d[1]), Number(d[2]), Number(d[3])];
  const [hour, minute, second] = [Number(t[1]), Number(t[2]), Number(t[3])];
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 59)) return null;
  const when = new Date(Date.UTC(2000 + year, month - 1, day, hour, minute, second));
  // 31 February and the like roll over in Date.UTC: refuse them instead.
  return when.getUTCDate() === day ? when : null;
}

/** `ddmm.mmmm` / `dddmm.mmmm` (any number of degree digits) and its hemisphere letter; null if unreadable. */
export function coordinate(value: string, hemisphere: string, negative: string, positive: string, max: number): number | null {
  const match = /^(\d*)(\d\d(?:\.\d+)?)$/.exec(value);
  if (!match || (hemisphere !== negative && hemisphere !== positive)) return null;
  const minutes = Number(match[2]);
  const degrees = Number(match[1] || 0) + minutes / 60;
  if (!(minutes < 60 && degrees <= max)) return null;
  return hemisphere === negative ? -degrees : degrees;
}

/** A decimal number field (`NA` or empty = absent); null when present but unreadable. */
export function decimal(field: string | undefined, signed = false): number | undefined | null {
  if (!known(field)) return undefined;
  const ok = signed ? /^-?\d+(?:\.\d+)?$/ : /^\d+(?:\.\d+)?$/;
  return ok.test(field) ? Number(field) : null;
}

/** Names that would reach an object's prototype rather than its own keys. */
const UNSAFE_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The extra parameters, `name:type:value` separated by commas: type 1 is an integer, 2 a double, 3 a
 * string. Names are lower-cased (devices spell the same sensor `EvId` and `evid`); numbers that do not
 * read as numbers are kept as text; entries that are not `name:type:value` are skipped.
 */
export function readParams(text: string): Record<string, AttributeValue> {
  const params: Record<string, AttributeValue> = {};
  for (const entry of text.split(',')) {
    const match = /^([^:]{1,64}):([123]):(.*)$/s.exec(entry);
    if (!match) continue;
    const name = match[1]!.trim().toLowerCase();
    if (name === '' || UNSAFE_NAMES.has(name) || /[\x00-\x1f]/.test(name)) continue;
    const raw = match[3]!;
    const number = Number(raw);
    params[name] = match[2] !== '3' && raw.trim() !== '' && Number.isFinite(number) ? number : raw;
  }
  return params;
}
