import type { AttributeValue, DecodedReport } from '../../protocol.ts';
import { pairs, typeEvent, utcDate } from './tk103-fields.ts';

/** TK103 messages that carry telemetry but no GPS fix; each becomes a report. */

function report(time: Date | undefined, attributes: Record<string, AttributeValue>): DecodedReport {
  return time ? { time, attributes } : { attributes };
}

function dayTime(ddmmyy: string, hhmmss: string): Date | undefined {
  const [day, month, year] = pairs(ddmmyy);
  return utcDate(year, month, day, ...pairs(hhmmss));
}

/** ZC20 `ddmmyy,hhmmss,level,battery(10 mV),power(100 mV),installed`; 255 and 65535 mean "absent". */
const ZC20 = /^(?<date>\d{6}),(?<time>\d{6}),(?<level>\d+),(?<battery>\d+),(?<power>\d+),\d+/;
/** The level is a 1–6 gauge step, mapped to the percentages the device's own display shows. */
const LEVELS: Record<string, number> = { 2: 10, 3: 20, 4: 50, 5: 80, 6: 100 };

export function decodeBatteryReport(body: string): DecodedReport | undefined {
  const g = ZC20.exec(body)?.groups;
  if (!g) return undefined;
  const attributes: Record<string, AttributeValue> = {};
  const level = LEVELS[g.level!];
  if (level !== undefined) attributes.batteryLevel = level;
  if (g.battery !== '65535') attributes.battery = Number(g.battery) / 100;
  if (g.power !== '65535') attributes.power = Number(g.power) / 10;
  return report(dayTime(g.date!, g.time!), attributes);
}

/** ZC03 `ddmmyy,hhmmss,$<answer text, may span lines>$`: a command's answer, kept as the result. */
const ZC03 = /^(?<date>\d{6}),(?<time>\d{6}),\$(?<text>[\s\S]*?)(?:\$|$)/;

export function decodeCommandResult(body: string): DecodedReport | undefined {
  const g = ZC03.exec(body)?.groups;
  return g ? report(dayTime(g.date!, g.time!), { result: g.text! }) : undefined;
}

/**
 * DW5x `mcc,mnc,lac,cid,count,(mac*rssi*channel,)…ddmmyy,hhmmss`: the serving cell and Wi-Fi
 * access points, sent instead of a fix; the type names the event (see typeEvent).
 */
const CELL_WIFI = /^(?<mcc>\d+),(?<mnc>\d+),(?<lac>\d+),(?<cid>\d+),(?<count>\d+),(?:(?:[0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}\*[-+]?\d+\*\d+,)*(?<date>\d{6}),(?<time>\d{6})/;

export function decodeCellWifiReport(type: string, body: string): DecodedReport | undefined {
  const g = CELL_WIFI.exec(body)?.groups;
  if (!g) return undefined;
  return report(dayTime(g.date!, g.time!), {
    ...typeEvent(type),
    mcc: Number(g.mcc),
    mnc: Number(g.mnc),
    lac: Number(g.lac),
    cid: Number(g.cid),
    wifiCount: Number(g.count),
  });
}

/**
 * The serving cell, in the two layouts firmwares use: `{mcc,mnc,lac,cid}` groups in decimal (BZ00
 * and BP05 logins without a fix), or a flat `mcc,mnc,lac,cid,…` list with hexadecimal LAC/CID (BZ00).
 */
const CELL_BRACED = /\{(?<mcc>\d+),(?<mnc>\d+),(?<lac>\d+),(?<cid>\d+)\}/;
const CELL_FLAT = /^,(?<mcc>\d+),(?<mnc>\d+),(?<lac>[0-9A-Fa-f]+),(?<cid>[0-9A-Fa-f]+)(?:,|$)/;

export function decodeCellReport(body: string): DecodedReport | undefined {
  const braced = CELL_BRACED.exec(body)?.groups;
  const flat = braced ? undefined : CELL_FLAT.exec(body)?.groups;
  const g = braced ?? flat;
  if (!g) return undefined;
  const radix = braced ? 10 : 16;
  return report(undefined, { mcc: Number(g.mcc), mnc: Number(g.mnc), lac: parseInt(g.lac!, radix), cid: parseInt(g.cid!, radix) });
}

/** BV00 `<17-character VIN>`, read from the vehicle's OBD port. */
export function decodeVinReport(body: string): DecodedReport | undefined {
  return /^[0-9A-Z]{17}$/.test(body) ? report(undefined, { vin: body }) : undefined;
}

/**
 * BS5x: battery-pack (BMS) data, in a layout we have no description of. It is kept raw, so it can
 * be decoded later from stored reports rather than lost.
 */
export function decodeBatteryPackReport(type: string, body: string): DecodedReport | undefined {
  return /^[0-9A-Fa-f:,]+$/.test(body) ? report(undefined, { batteryPack: `${type}${body}` }) : undefined;
}
