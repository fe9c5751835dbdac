import type { DecodedFrame, DecodedPosition, DecodedReport, DecoderSession } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { CRC_FIELD, crc16, type TextEncoding } from './wialon-fields.ts';
import { decodeRecord, EXTENDED_FIELDS, SHORT_FIELDS, type RecordOutcome } from './wialon-records.ts';

/**
 * Wialon IPS 1.1 and 2.0: `#TYPE#data` lines (the framer strips `\r\n`). Over UDP each packet carries
 * its device in front, `<imei>#TYPE#…` (2.0: `2.0;<imei>#TYPE#…`); over TCP the device logs in once.
 *   #L#  login `imei;password` or `2.0;imei;password;crc`     → #AL#1
 *   #SD# short data, #D# extended data (2.0: `;crc` after)  → #ASD#<code>, #AD#<code>
 *   #B#  black box: records separated by `|` (2.0: `|crc`)   → #AB#<records registered>
 *   #P#  ping                                                → #AP#
 *   #M#  a message from the driver or a command's answer     → #AM#1
 * Answer codes: 1 registered, -1 bad structure, 0 bad time, 10 coordinates, 11 speed/course/altitude,
 * 12 satellites, 13 inputs/outputs (#SD#: checksum), 14 ADC, 16 checksum (#D#).
 * 2.0 checksums (CRC-16, wialon-fields.ts) of data packets are checked, so a damaged packet is answered
 * with the checksum code and resent; the login's is not (devices differ in what they cover, and a
 * refused login would lock the device out).
 */
export function decodeWialon(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  const { text, encoding } = readText(frame);
  // The checksum covers the bytes the device sent, so text is summed in the encoding it arrived in.
  const checksum = (covered: string) => crc16(covered, encoding);
  const header = /^([^#]*)#([A-Z]{1,3})#(.*)$/s.exec(text);
  if (!header) throw new MalformedFrameError('Wialon packet has no #TYPE# header');
  const [, prefix, type, data] = header as unknown as [string, string, string, string];
  if (prefix !== '') {
    const parts = prefix.split(';');
    const id = parts.length === 2 && parts[0]!.includes('.') ? parts[1]! : prefix;
    session.deviceId = checkedId(id);
  }
  switch (type) {
    case 'L':
      return login(data, session);
    case 'P':
      return withId(session, { positions: [], reply: answer('P', '') });
    case 'SD':
    case 'D':
      return dataPacket(type, data, session, checksum);
    case 'B':
      return blackBox(data, session, checksum);
    case 'M':
      return message(data, session, checksum);
    case 'AM':
      // The device's receipt of a message (a command) we sent: 1 delivered, 0 refused. A refusal says
      // so in words, which is what fails a command (domain/commands/answer-outcome.ts).
      return withId(session, { positions: [], answer: { text: data === '0' ? '#AM#0 (refused)' : `#AM#${data}` } });
    default:
      // Firmware upload (#US#), pictures (#I#), DDD files (#T#) and the like: not read here.
      return withId(session, { positions: [] });
  }
}

/** Packets are ASCII but for parameter names and messages, in UTF-8 or a single-byte code page. */
function readText(frame: Uint8Array): { text: string; encoding: TextEncoding } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(frame), encoding: 'utf8' };
  } catch {
    return { text: Buffer.from(frame).toString('latin1'), encoding: 'latin1' };
  }
}

/** The CRC-16 of text as the bytes it came in. */
type Checksum = (covered: string) => number;

/** A device id: printable, no separators, at most 32 characters (IMEIs are 15). */
function checkedId(id: string): string {
  if (!/^[\x21-\x7e]{1,32}$/.test(id) || /[#;|]/.test(id)) throw new MalformedFrameError(`Wialon device id ${JSON.stringify(id.slice(0, 40))} is not usable`);
  return id;
}

function answer(type: string, value: string | number): Uint8Array {
  return Buffer.from(`#A${type}#${value}\r\n`, 'latin1');
}

function withId(session: DecoderSession, result: DecodedFrame): DecodedFrame {
  return session.deviceId === undefined ? result : { deviceId: session.deviceId, ...result };
}

/** `imei;password` (1.1) or `2.0;imei;password;crc`. The password is not checked: devices are known by id. */
function login(data: string, session: DecoderSession): DecodedFrame {
  const values = data.split(';');
  const id = values[0]!.includes('.') ? values[1] : values[0];
  session.deviceId = checkedId(id ?? '');
  return { deviceId: session.deviceId, positions: [], reply: answer('L', 1) };
}

/** Splits off a 2.0 checksum after the last separator; false when it is there and wrong. */
function stripChecksum(data: string, separator: string, expectedParts: number[], checksum: Checksum): { body: string[] } | false {
  const parts = data.split(separator);
  if (expectedParts.includes(parts.length)) return { body: parts };
  if (!expectedParts.includes(parts.length - 1)) return { body: parts };
  const field = parts[parts.length - 1]!;
  const covered = data.slice(0, data.length - field.length);
  // Some firmwares write something else there (`0x9b0`); only a four-digit checksum is checked.
  if (CRC_FIELD.test(field) && checksum(covered) !== parseInt(field, 16)) return false;
  return { body: parts.slice(0, -1) };
}

function dataPacket(type: 'SD' | 'D', data: string, session: DecoderSession, checksum: Checksum): DecodedFrame {
  if (session.deviceId === undefined) return { positions: [] };
  const sizes = type === 'SD' ? [SHORT_FIELDS] : [SHORT_FIELDS, EXTENDED_FIELDS];
  const split = stripChecksum(data, ';', sizes, checksum);
  if (!split) return withId(session, { positions: [], reply: answer(type, type === 'SD' ? 13 : 16) });
  const outcome = decodeRecord(split.body);
  if ('error' in outcome) return withId(session, { positions: [], reply: answer(type, outcome.error) });
  return withId(session, { ...records([outcome]), reply: answer(type, 1) });
}

function records(outcomes: RecordOutcome[]): { positions: DecodedPosition[]; reports?: DecodedReport[] } {
  const positions: DecodedPosition[] = [];
  const reports: DecodedReport[] = [];
  for (const outcome of outcomes) {
    if ('position' in outcome) positions.push(outcome.position);
    else if ('report' in outcome) reports.push(outcome.report);
  }
  return reports.length > 0 ? { positions, reports } : { positions };
}

/** Stored records sent late: each is marked `archive`. The answer counts the records registered. */
function blackBox(data: string, session: DecoderSession, checksum: Checksum): DecodedFrame {
  if (session.deviceId === undefined) return { positions: [] };
  const parts = data.split('|');
  let body = parts;
  const last = parts[parts.length - 1]!;
  if (parts.length > 1 && CRC_FIELD.test(last)) {
    if (checksum(data.slice(0, data.length - last.length)) !== parseInt(last, 16)) return withId(session, { positions: [], reply: answer('B', 0) });
    body = parts.slice(0, -1);
  }
  const outcomes = body.map((record) => decodeRecord(record.split(';'))).filter((o) => !('error' in o));
  for (const outcome of outcomes) {
    if ('position' in outcome) outcome.position.attributes.archive = true;
    else if ('report' in outcome) outcome.report.attributes.archive = true;
  }
  return withId(session, { ...records(outcomes), reply: answer('B', outcomes.length) });
}

/** A message to the server: the driver's text, or a device's answer to a command (#M# text). */
function message(data: string, session: DecoderSession, checksum: Checksum): DecodedFrame {
  if (session.deviceId === undefined) return { positions: [] };
  let text = data;
  const trailer = /;([0-9A-Fa-f]{4})$/.exec(data);
  if (trailer && checksum(data.slice(0, -4)) === parseInt(trailer[1]!, 16)) text = data.slice(0, -5);
  return {
    deviceId: session.deviceId,
    positions: [],
    reports: [{ attributes: { result: text } }],
    answer: { text },
    reply: answer('M', 1),
  };
}
