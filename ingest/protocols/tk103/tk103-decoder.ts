import type { CommandAnswer, DecodedFrame, DecodedReport, DecoderSession } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { decodeCompactFix, decodeDelimitedFix, type Fix } from './tk103-position.ts';
import {
  decodeBatteryPackReport,
  decodeBatteryReport,
  decodeCellReport,
  decodeCellWifiReport,
  decodeCommandResult,
  decodeVinReport,
} from './tk103-reports.ts';

/**
 * TK103 decoder. Every message names its device: `(<id><type><body>)` with a fixed-width id
 * (usually 12 characters, also 11 or 15) glued to a four-character type such as BR00, or
 * `(<id>,<type>,<body>)` on newer firmwares. Types we do not read identify the device and
 * give nothing else.
 */
export function decodeTk103(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  const text = Buffer.from(frame).toString('latin1');
  const header = parseHeader(text);
  if (!header) throw new MalformedFrameError('TK103 message has no (<id><type> header');
  const { id, type, body, delimited } = header;
  if (id.length > MAX_ID_LENGTH) throw new MalformedFrameError(`TK103 device id of ${id.length} characters, more than the ${MAX_ID_LENGTH} allowed`);
  session.deviceId = id;
  const result: DecodedFrame = { deviceId: id, positions: [] };
  const reply = replyTo(id, type);
  if (reply) result.reply = Buffer.from(reply, 'latin1');
  const decoded = delimited ? decodeDelimited(type, body) : decodeCompact(type, body);
  if (decoded && 'position' in decoded) result.positions.push(decoded.position);
  else if (decoded) result.reports = [decoded.report];
  const answer = answerOf(type, body, decoded);
  if (answer) result.answer = answer;
  return result;
}

/**
 * Answers to our commands: BV01 answers the oil/power line control AV01 (`(<id>BV010)`), and ZC03
 * carries the text result of a command on newer firmwares.
 */
function answerOf(type: string, body: string, decoded: Fix | undefined): CommandAnswer | undefined {
  if (type === 'BV01') return { text: `BV01${body}` };
  if (type === 'ZC03' && decoded && 'report' in decoded) return { text: String(decoded.report.attributes.result) };
  return undefined;
}

const TYPE = /^[A-Z]{2}[0-9A-Z]{2}$/;
const COMMA_HEADER = /^\((?<id>[0-9A-Za-z]+),(?<type>[A-Z]{2}[0-9A-Z]{2}),(?<body>[\s\S]*)\)$/;
/** Id widths seen on compact messages, most common first. */
const ID_WIDTHS = [12, 15, 11, 13, 14, 10, 16];
/** Ids are 10 to 16 characters (an IMEI is 15); the comma form could carry any length, a device none longer than this. */
const MAX_ID_LENGTH = 20;

interface Header {
  id: string;
  type: string;
  body: string;
  delimited: boolean;
}

function parseHeader(text: string): Header | undefined {
  if (!text.startsWith('(') || !text.endsWith(')')) return undefined;
  const comma = COMMA_HEADER.exec(text)?.groups;
  if (comma) return { id: comma.id!, type: comma.type!, body: comma.body!, delimited: true };
  const inner = text.slice(1, -1);
  // The id has no delimiter, so take the first usual width that is followed by a type code.
  for (const width of ID_WIDTHS) {
    const id = inner.slice(0, width);
    const type = inner.slice(width, width + 4);
    if (/^[0-9A-Za-z]+$/.test(id) && id.length === width && TYPE.test(type)) return { id, type, body: inner.slice(width + 4), delimited: false };
  }
  return undefined;
}

/** BP00 (handshake) and BP05 (login) must be answered, or the tracker keeps retrying. */
function replyTo(id: string, type: string): string | undefined {
  if (type === 'BP00') return `(${id}AP01HSO)`;
  if (type === 'BP05') return `(${id}AP05)`;
  return undefined;
}

function asFix(report: DecodedReport | undefined): Fix | undefined {
  return report ? { report } : undefined;
}

function decodeCompact(type: string, body: string): Fix | undefined {
  switch (type) {
    case 'BP00':
    case 'BQ86':
      return undefined;
    case 'BV00':
      return asFix(decodeVinReport(body));
    case 'BV01':
      // The answer to AV01 (the oil/power line): a report of its result, no fix.
      return asFix({ attributes: { result: `BV01${body}` } });
    case 'BZ00':
      return asFix(decodeCellReport(body));
    case 'BP05': {
      // The login repeats the IMEI, then either a fix or, without GPS, the serving cells.
      const imei = /^\d{15}/.exec(body);
      const rest = imei ? body.slice(15) : body;
      return decodeCompactFix(type, rest) ?? asFix(decodeCellReport(rest));
    }
    default:
      if (type.startsWith('BS')) return asFix(decodeBatteryPackReport(type, body));
      return decodeCompactFix(type, body);
  }
}

function decodeDelimited(type: string, body: string): Fix | undefined {
  if (type === 'ZC20') return asFix(decodeBatteryReport(body));
  if (type === 'ZC03') return asFix(decodeCommandResult(body));
  if (type.startsWith('DW5')) return asFix(decodeCellWifiReport(type, body));
  return decodeDelimitedFix(type, body);
}
