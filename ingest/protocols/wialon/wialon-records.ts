import type { AttributeValue, DecodedPosition, DecodedReport } from '../../protocol.ts';
import { coordinate, decimal, known, packetTime, readParams } from './wialon-fields.ts';

/**
 * One data record, the body of `#SD#` (short: 10 fields) or `#D#` (extended: 16 fields), also the
 * records of a `#B#` black box:
 *   date;time;lat;N|S;lon;E|W;speed(km/h);course;altitude;sats
 *   [;hdop;inputs;outputs;adc1,adc2,…;ibutton;name:type:value,…]
 * Every field may be `NA`. A record with a time and a location is a position; without either it is a
 * report (the device's state still counts, but it cannot be placed on the map or in time).
 */
export type RecordOutcome =
  | { position: DecodedPosition }
  | { report: DecodedReport }
  /** The answer code Wialon IPS defines for what is wrong with the record (see wialon-decoder.ts). */
  | { error: number };

export const SHORT_FIELDS = 10;
export const EXTENDED_FIELDS = 16;

/** Answer codes of `#ASD#` / `#AD#` for a record that cannot be registered. */
export const CODE = { structure: -1, time: 0, coordinates: 10, motion: 11, satellites: 12, io: 13, adc: 14 } as const;

/** Parameters that name a quantity the attribute vocabulary has a name for. */
const VOCABULARY: Record<string, string> = { pwr_ext: 'power', pwr_int: 'battery' };
/** Parameters some firmwares fill with the GSM CSQ (0–31). */
const CSQ_PARAMS = ['csq', 'gsm_csq', 'd_csq'];

export function decodeRecord(fields: string[]): RecordOutcome {
  if (fields.length !== SHORT_FIELDS && fields.length !== EXTENDED_FIELDS) return { error: CODE.structure };
  const [date, time, lat, ns, lon, ew, speedField, courseField, altitudeField, satsField] = fields;
  const fixTime = packetTime(date, time);
  if (fixTime === null) return { error: CODE.time };

  let location: { latitude: number; longitude: number } | undefined;
  if (known(lat) && known(ns) && known(lon) && known(ew)) {
    const latitude = coordinate(lat, ns, 'S', 'N', 90);
    const longitude = coordinate(lon, ew, 'W', 'E', 180);
    if (latitude === null || longitude === null) return { error: CODE.coordinates };
    location = { latitude, longitude };
  }
  const speed = decimal(speedField);
  const course = decimal(courseField);
  const altitude = decimal(altitudeField, true);
  if (speed === null || course === null || altitude === null) return { error: CODE.motion };
  const satellites = decimal(satsField);
  if (satellites === null || (satellites !== undefined && !Number.isInteger(satellites))) return { error: CODE.satellites };

  const attributes: Record<string, AttributeValue> = {};
  let signalStrength: number | undefined;
  if (fields.length === EXTENDED_FIELDS) {
    const [hdopField, inputs, outputs, adc, ibutton, params] = fields.slice(SHORT_FIELDS);
    if (known(params)) {
      const read = readParams(params);
      Object.assign(attributes, read);
      for (const [name, target] of Object.entries(VOCABULARY)) if (typeof read[name] === 'number') attributes[target] = read[name];
      if (read.sos === 1) attributes.alarm = 'sos';
      const csq = CSQ_PARAMS.map((name) => read[name]).find((v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 31);
      if (csq !== undefined) signalStrength = csq as number;
    }
    const hdop = decimal(hdopField);
    if (typeof hdop === 'number') attributes.hdop = hdop;
    for (const [name, field] of [['input', inputs], ['output', outputs]] as const) {
      if (!known(field)) continue;
      if (!/^\d{1,10}$/.test(field)) return { error: CODE.io };
      attributes[name] = Number(field);
    }
    if (known(adc)) {
      const values = adc.split(',');
      for (const [i, value] of values.entries()) {
        const reading = decimal(value.trim(), true);
        if (reading === null) return { error: CODE.adc };
        if (reading !== undefined) attributes[`adc${i + 1}`] = reading;
      }
    }
    if (known(ibutton)) attributes.driverUniqueId = ibutton;
  }

  const radio = signalStrength === undefined ? {} : { signalStrength };
  if (!fixTime || !location) return { report: { ...(fixTime ? { time: fixTime } : {}), ...radio, attributes } };
  const position: DecodedPosition = {
    fixTime,
    // Wialon IPS carries no validity flag: a fix from fewer than 3 satellites is not one; without a
    // count, the device gave coordinates and is taken at its word.
    valid: satellites === undefined ? true : satellites >= 3,
    ...location,
    ...radio,
    attributes,
  };
  if (speed !== undefined) position.speedKmh = speed;
  if (course !== undefined && course <= 360) position.heading = course;
  if (altitude !== undefined) position.altitude = altitude;
  if (satellites !== undefined) position.satellites = satellites;
  return { position };
}
