import type { AttributeValue, DecodedPosition, DecodedReport } from '../../protocol.ts';
import { BO01_ALARMS, BQ81_ALARMS, coordinate, pairs, typeEvent, utcDate } from './tk103-fields.ts';

/**
 * The two ways TK103 firmwares write a fix. Either yields a position, or a report when the date is
 * impossible (the fix cannot be placed in time, but its status fields still count).
 */
export type Fix = { position: DecodedPosition } | { report: DecodedReport };

/**
 * Compact form, after `(<id><type>`: fixed-width fields, yymmdd date, speed in km/h:
 *   [data digits | ,ALARM,<code>,<n>, | ,<x>,<y>,] yymmdd A ddmm.mmmmN dddmm.mmmmE speed(5) hhmmss
 *   then course(6, or 2 digits) + 8 state characters + `L` + odometer (hex), or a course `d.d`;
 *   then model extras (a trailing `+ddd.d` is a temperature).
 */
const COMPACT = new RegExp(
  [
    String.raw`^(?:(?<data>\d*)|,ALARM,(?<alarm>\d),\d+,|(?:,\w*)+,)`,
    String.raw`(?<date>\d{6}),?(?<validity>[AV]),?`,
    String.raw`(?<lat> *\d*\d\d\.\d+)(?<ns>[NS]),?`,
    String.raw`(?<lon> *\d*\d\d\.\d+)(?<ew>[EW]),?`,
    // Speed is up to five characters including the point and padding spaces.
    String.raw`(?<speed>[ \d.]{1,5})(?:\d*,)?`,
    String.raw`(?<time>\d{6}),?`,
    String.raw`(?:(?:(?<course>[ \d.]{6})|(?<course2>\d\d)),?`,
    // State: charging (0 = yes), ignition, three input/output nibbles, fuel (hex 3), L + odometer.
    String.raw`(?<charge>[01])(?<ignition>[01])(?<io>[0-9A-Fa-f]{3})(?<fuel>[0-9A-Fa-f]{3})L(?<odometer>[0-9A-Fa-f]+)`,
    String.raw`|(?<course3>\d+\.\d+))?`,
    String.raw`(?<tail>[\s\S]*)$`,
  ].join(''),
);

export function decodeCompactFix(type: string, body: string): Fix | undefined {
  const g = COMPACT.exec(body)?.groups;
  if (!g) return undefined;
  const attributes: Record<string, AttributeValue> = {};
  if (type === 'BQ81' && g.alarm !== undefined) {
    const alarm = BQ81_ALARMS[Number(g.alarm)];
    if (alarm) attributes.alarm = alarm;
  }
  if (type === 'BO01' && g.data) {
    const alarm = BO01_ALARMS[Number(g.data[0])];
    if (alarm) attributes.alarm = alarm;
  }
  if (g.charge !== undefined) {
    attributes.charge = g.charge === '0';
    attributes.ignition = g.ignition === '1';
    [...g.io!].forEach((nibble, i) => (attributes[`io${i + 1}`] = parseInt(nibble, 16)));
    attributes.fuel = parseInt(g.fuel!, 16);
    attributes.odometer = parseInt(g.odometer!, 16);
  }
  const temperature = /([+-]\d{3}\.\d)\)?$/.exec(g.tail!);
  if (temperature) attributes.temp1 = Number(temperature[1]);
  const course = g.course ?? g.course2 ?? g.course3;
  const [year, month, day] = pairs(g.date!);
  return fix(utcDate(year, month, day, ...pairs(g.time!)), g, course, attributes);
}

/**
 * Comma form, after `(<id>,<type>,`: `ddmmyy,A,ddmm.mmmmN,dddmm.mmmmE,speed,hhmmss,course`
 * then, on newer models, altitude and satellites, and model extras.
 */
const DELIMITED =
  /^(?<date>\d{6}),(?<validity>[AV]),(?<lat>\d*\d\d\.\d+)(?<ns>[NS]),(?<lon>\d*\d\d\.\d+)(?<ew>[EW]),(?<speed>\d+(?:\.\d+)?),(?<time>\d{6}),(?<course>\d+(?:\.\d+)?)(?:,(?<altitude>-?\d+(?:\.\d+)?),(?<satellites>\d+))?(?:,[\s\S]*)?$/;

export function decodeDelimitedFix(type: string, body: string): Fix | undefined {
  const g = DELIMITED.exec(body)?.groups;
  if (!g) return undefined;
  const [day, month, year] = pairs(g.date!);
  const result = fix(utcDate(year, month, day, ...pairs(g.time!)), g, g.course, typeEvent(type));
  if ('position' in result) {
    if (g.altitude !== undefined) result.position.altitude = Number(g.altitude);
    if (g.satellites !== undefined) result.position.satellites = Number(g.satellites);
  }
  return result;
}

function fix(fixTime: Date | undefined, g: Record<string, string | undefined>, course: string | undefined, attributes: Record<string, AttributeValue>): Fix {
  if (!fixTime) return { report: { attributes } };
  const position: DecodedPosition = {
    fixTime,
    valid: g.validity === 'A',
    latitude: coordinate(g.lat!, g.ns!, 90),
    longitude: coordinate(g.lon!, g.ew!, 180),
    attributes,
  };
  const speed = Number(g.speed!.trim());
  if (Number.isFinite(speed)) position.speedKmh = speed;
  const heading = course === undefined ? NaN : Number(course.trim());
  if (Number.isFinite(heading) && heading >= 0 && heading <= 360) position.heading = heading;
  return { position };
}
