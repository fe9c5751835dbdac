import type { DecodedFrame, DecodedPosition, DecodedReport, DecoderSession } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { decodeH02Binary } from './h02-binary-decoder.ts';
import { KMH_PER_KNOT, sixDigits, utcDate } from './h02-fields.ts';
import { decodeHeartbeat, decodeLink, decodeNbr, decodeSms, decodeV3, decodeVp1Cells } from './h02-other-sentences.ts';
import { decodePositionSentence } from './h02-position-sentence.ts';

/**
 * H02 decoder: `$` binary records and `*XX,id,TYPE,…#` text sentences (XX is the maker code, HQ
 * on most devices). Sentences of a type we do not read, or that lack a fix, still identify the
 * device but give no position, which is what the tracker expects from a server that ignores them.
 */
export function decodeH02(frame: Uint8Array, session: DecoderSession, receivedAt = new Date()): DecodedFrame {
  switch (frame[0]) {
    case 0x24:
      return decodeH02Binary(frame, session);
    case 0x58:
      // `X` records answer server queries and carry no fix.
      return { positions: [] };
    case 0x2a:
      return decodeSentence(Buffer.from(frame).toString('latin1').trim(), session, receivedAt);
    default:
      throw new MalformedFrameError('H02 frame starts with neither *, $ nor X');
  }
}

/** The device id and the type are the second and third fields of every sentence. */
const HEADER = /^\*\w{2},(?<id>\d*),(?<type>[^,#]*)/;
/** Ids are 10 digits, or the 15 of an IMEI; longer is not a device. */
const MAX_ID_DIGITS = 20;

function decodeSentence(sentence: string, session: DecoderSession, receivedAt: Date): DecodedFrame {
  const header = HEADER.exec(sentence)?.groups;
  if (!header || !sentence.endsWith('#')) throw new MalformedFrameError('H02 sentence has no *XX,id,type header');
  if (header.id!.length > MAX_ID_DIGITS) throw new MalformedFrameError(`H02 device id of ${header.id!.length} digits, more than the ${MAX_ID_DIGITS} allowed`);
  const id = header.id || undefined;
  if (id) session.deviceId = id;
  const result: DecodedFrame = { positions: [] };
  if (id) result.deviceId = id;
  let position: DecodedPosition | undefined;
  let report: DecodedReport | undefined;
  switch (header.type) {
    case 'HTBT':
    case 'V0':
      // The heartbeat is answered by echoing its header, or the device reconnects.
      if (id) result.reply = ascii(`${sentence.slice(0, HEADER.exec(sentence)![0].length)}#`);
      report = decodeHeartbeat(sentence);
      break;
    case 'NBR':
      report = decodeNbr(sentence);
      break;
    case 'LINK':
      report = decodeLink(sentence);
      break;
    case 'V3':
      report = decodeV3(sentence);
      break;
    case 'VP1':
      position = decodeVp1(sentence);
      report = position ? undefined : decodeVp1Cells(sentence);
      break;
    case 'SMS':
      report = decodeSms(sentence);
      break;
    default: {
      const decoded = decodePositionSentence(sentence, receivedAt);
      position = decoded?.position;
      // V1 fixes are acknowledged with the server time; firmwares use it to keep their clock.
      if (decoded?.type === 'V1' && id) result.reply = ascii(`*HQ,${id},V4,V1,${compactTime(receivedAt)}#`);
      // V4 confirms a command, with a fix or (some firmwares) without: `*HQ,id,V4,S20,130305#`.
      if (header.type === 'V4') result.answer = { text: decoded?.echo ?? sentence.slice(HEADER.exec(sentence)![0].length + 1, -1) };
    }
  }
  if (position) result.positions.push(position);
  if (report) result.reports = [report];
  return result;
}

/**
 * `*hq,imei,VP1,A,ddmm.mmmm,N,dddmm.mmmm,E,speed,course,ddmmyy…` — a fix with a date but no time
 * of day; `VP1,V,mcc,mnc,cells…` reports cells only and gives no position.
 */
const VP1 = /^\*\w{2},\d+,VP1,[AB],(?<latDeg>\d+)(?<latMin>\d\d\.\d+),(?<ns>[NS]),(?<lonDeg>\d+)(?<lonMin>\d\d\.\d+),(?<ew>[EW]),(?<speed>\d+\.\d+),(?<course>\d+\.\d+),(?<date>\d{6})/;

function decodeVp1(sentence: string): DecodedPosition | undefined {
  const g = VP1.exec(sentence)?.groups;
  if (!g) return undefined;
  const latitude = Number(g.latDeg) + Number(g.latMin) / 60;
  const longitude = Number(g.lonDeg) + Number(g.lonMin) / 60;
  const heading = Number(g.course);
  if (!(latitude <= 90 && longitude <= 180 && heading <= 360)) throw new MalformedFrameError('H02 VP1 fix is out of range');
  return {
    fixTime: utcDate(...sixDigits(g.date!)),
    valid: true,
    latitude: g.ns === 'S' ? -latitude : latitude,
    longitude: g.ew === 'W' ? -longitude : longitude,
    speedKmh: Number(g.speed) * KMH_PER_KNOT,
    heading,
    attributes: {},
  };
}

function compactTime(at: Date): string {
  return at.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

function ascii(text: string): Uint8Array {
  return Buffer.from(text, 'latin1');
}
