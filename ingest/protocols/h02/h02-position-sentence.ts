import type { AttributeValue, DecodedPosition } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { KMH_PER_KNOT, sixDigits, statusAttributes, utcDate } from './h02-fields.ts';

/**
 * The position sentence, V1 and its variants (V2, V5, V6, V8, V19, VI1…), and V4, the answer to a
 * command, which puts the command echo and its time before the fix:
 *   *HQ,id,V1,hhmmss,A,lat,N,lon,E,speed,course[,battery],ddmmyy[,sim…][,status[,extra…]]#
 * Firmwares differ in details kept optional here: an empty id, time or date, a coding-scheme
 * number in place of the validity letter, and three coordinate notations (see `coordinate`).
 */
const POSITION = new RegExp(
  [
    String.raw`^\*\w{2},`,
    String.raw`(?<id>\d*),`,
    // V4 echoes the command (which may hold commas); the greedy echo still leaves the fix fields.
    String.raw`(?:V4,(?<echo>.*),|(?<type>V[^,]*),)`,
    String.raw`(?<time>\d{6})?,`,
    // A digit instead of A/V is a coding scheme, sent only with a valid fix.
    String.raw`(?:(?<validity>[ABV])?|(?<scheme>\d+)),`,
    String.raw`(?<lat>[-\d.]+),(?<ns>[NS]),`,
    String.raw`(?<lon>[-\d.]+),(?<ew>[EW]),`,
    String.raw` *(?<speed>\d+\.?\d*),`,
    String.raw`(?<course>\d+\.?\d*)?,`,
    // Some models put a battery figure before the date; the look-ahead keeps it from eating the date.
    String.raw`(?:\d+,)?`,
    String.raw`(?<date>\d{6})?(?=[,#])`,
    String.raw`(?:,(?<rest>[^#]*))?#$`,
  ].join(''),
);

/**
 * Coordinates come as `ddmm.mmmm` (any number of degree digits, even none), as `-dd-m.mmmm`
 * (a firmware that signs both parts), or as `ddmmmmmm` (minutes times 10,000, no point).
 */
function coordinate(text: string, negative: boolean, max: number): number | undefined {
  let match = /^-(\d+)-(\d+\.\d+)$/.exec(text) ?? /^(\d*)(\d\d\.\d+)$/.exec(text);
  let degrees: number;
  let minutes: number;
  if (match) {
    degrees = Number(match[1] || 0);
    minutes = Number(match[2]);
  } else {
    match = /^(\d+)(\d\d)(\d{4})$/.exec(text);
    if (!match) return undefined;
    degrees = Number(match[1]);
    minutes = Number(match[2]) + Number(match[3]) / 10000;
  }
  const value = degrees + minutes / 60;
  if (!(minutes < 60 && value <= max)) throw new MalformedFrameError(`H02 coordinate ${text} is out of range`);
  return negative ? -value : value;
}

const HEX8 = /^[0-9A-Fa-f]{8}$/;
const EXTENDED = [/^\d+$/, /^-?\d+$/, /^\d+\.\d+$/, /^-?\d+$/, /^[0-9A-Fa-f]+$/, /^[0-9A-Fa-f]+$/];

/**
 * After the date: optionally three SIM fields (IP, phone, ICCID on V19), then the status word,
 * then either odometer, temperature, fuel, altitude, LAC, CID or free model data kept as io<N>.
 */
function trailingFields(rest: string, position: DecodedPosition): void {
  const fields = rest.split(',');
  const at = HEX8.test(fields[0]!) ? 0 : fields.length > 3 && HEX8.test(fields[3]!) ? 3 : -1;
  if (at < 0) return;
  Object.assign(position.attributes, statusAttributes(parseInt(fields[at]!, 16)));
  const extra = fields.slice(at + 1);
  while (extra.length > 0 && extra[extra.length - 1]!.trim() === '') extra.pop();
  if (extra.length === EXTENDED.length && extra.every((v, i) => EXTENDED[i]!.test(v))) {
    position.attributes.odometer = Number(extra[0]);
    position.attributes.temp1 = Number(extra[1]);
    position.attributes.fuel = Number(extra[2]);
    position.altitude = Number(extra[3]);
    return;
  }
  extra.forEach((value, i) => (position.attributes[`io${i + 1}`] = value.trim()));
}

export interface PositionSentence {
  id: string;
  type: string;
  position?: DecodedPosition;
  /** V4: the command it confirms and that command's time (`S20,DONE,130305`). */
  echo?: string;
}

/** Undefined when the sentence is not a position sentence at all; `position` absent when it has no fix. */
export function decodePositionSentence(sentence: string, receivedAt: Date): PositionSentence | undefined {
  const g = POSITION.exec(sentence)?.groups;
  if (!g) return undefined;
  const latitude = coordinate(g.lat!, g.ns === 'S', 90);
  const longitude = coordinate(g.lon!, g.ew === 'W', 180);
  const type = g.type ?? 'V4';
  const echo = g.echo === undefined ? {} : { echo: g.echo };
  if (latitude === undefined || longitude === undefined) return { id: g.id!, type, ...echo };
  const [hour, minute, second] = g.time ? sixDigits(g.time) : [0, 0, 0];
  // Without a date the fix cannot be placed in time; the receipt time is the best there is.
  const fixTime = g.date ? utcDate(...sixDigits(g.date), hour, minute, second) : receivedAt;
  const heading = g.course === undefined ? undefined : Number(g.course);
  if (heading !== undefined && heading > 360) throw new MalformedFrameError(`H02 course ${g.course} is out of range`);
  const attributes: Record<string, AttributeValue> = {};
  if (g.echo !== undefined) attributes.result = g.echo;
  const position: DecodedPosition = {
    fixTime,
    valid: g.scheme !== undefined || g.validity === 'A',
    latitude,
    longitude,
    speedKmh: Number(g.speed) * KMH_PER_KNOT,
    attributes,
  };
  if (heading !== undefined) position.heading = heading;
  if (g.rest !== undefined) trailingFields(g.rest, position);
  return { id: g.id!, type, position, ...echo };
}
