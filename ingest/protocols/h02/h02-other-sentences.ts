import type { AttributeValue, DecodedReport } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { sixDigits, statusAttributes, utcDate } from './h02-fields.ts';

/**
 * Sentences without a GPS fix: cell-tower reports (NBR, V3, VP1 with V), wearable link status
 * (LINK), heartbeats (HTBT) and SMS-style command answers (SMS). They become reports: telemetry
 * that updates the device's state but adds no position.
 */

function report(time: Date | undefined, attributes: Record<string, AttributeValue>): DecodedReport {
  return time ? { time, attributes } : { attributes };
}

/**
 * Report times are informative only, and some firmwares send impossible ones (second 69 seen in
 * NBR); such a time is dropped rather than the report.
 */
function stamped(date: string, time: string): Date | undefined {
  const [hour, minute, second] = sixDigits(time);
  try {
    return utcDate(...sixDigits(date), hour, minute, second);
  } catch (error) {
    if (error instanceof MalformedFrameError) return undefined;
    throw error;
  }
}

/** `*HQ,id,NBR,hhmmss,mcc,mnc,delay,count,(lac,cid,rssi,)+ddmmyy,status…#` — neighbouring cells. */
const NBR = /^\*\w{2},\d+,NBR,(?<time>\d{6}),(?<mcc>\d+),(?<mnc>\d+),\d+,(?<count>\d+),(?:\d+,\d+,-?\d+,)+(?<date>\d{6}),(?<status>[0-9A-Fa-f]{8})/;

export function decodeNbr(sentence: string): DecodedReport | undefined {
  const g = NBR.exec(sentence)?.groups;
  if (!g) return undefined;
  return report(stamped(g.date!, g.time!), {
    mcc: Number(g.mcc),
    mnc: Number(g.mnc),
    ...statusAttributes(parseInt(g.status!, 16)),
  });
}

/** `*HQ,id,LINK,hhmmss,rssi,satellites,battery%,steps,turnovers,ddmmyy,status…#` — wearables. */
const LINK = /^\*\w{2},\d+,LINK,(?<time>\d{6}),(?<rssi>\d+),(?<sats>\d+),(?<battery>\d+),(?<steps>\d+),(?<turnovers>\d+),(?<date>\d{6}),(?<status>[0-9A-Fa-f]{8})/;

export function decodeLink(sentence: string): DecodedReport | undefined {
  const g = LINK.exec(sentence)?.groups;
  if (!g) return undefined;
  return report(stamped(g.date!, g.time!), {
    rssi: Number(g.rssi),
    satellites: Number(g.sats),
    batteryLevel: Number(g.battery),
    steps: Number(g.steps),
    turnovers: Number(g.turnovers),
    ...statusAttributes(parseInt(g.status!, 16)),
  });
}

/**
 * `*HQ,id,V3,hhmmss,mccmnc,count,(mcc,cid,rssi,…),battery(hex4),reboots,X,ddmmyy,status#` — the
 * serving and neighbour cells. The battery figure's unit is not documented, so it stays raw.
 */
const V3 = /^\*\w{2},\d+,V3,(?<time>\d{6}),(?<mcc>\d{3})(?<mnc>\d+),(?<count>\d+),.*,(?<battery>[0-9A-Fa-f]{4}),\d+,X,(?<date>\d{6}),(?<status>[0-9A-Fa-f]{8})#?$/;

export function decodeV3(sentence: string): DecodedReport | undefined {
  const g = V3.exec(sentence)?.groups;
  if (!g) return undefined;
  return report(stamped(g.date!, g.time!), {
    mcc: Number(g.mcc),
    mnc: Number(g.mnc),
    batteryRaw: parseInt(g.battery!, 16),
    ...statusAttributes(parseInt(g.status!, 16)),
  });
}

/** `*hq,imei,VP1,V,mcc,mnc,(lac,cid,rssi)Y…#`: cells only, the fix form is a position sentence. */
const VP1_CELLS = /^\*\w{2},\d+,VP1,V,(?<mcc>\d+),(?<mnc>\d+),/;

export function decodeVp1Cells(sentence: string): DecodedReport | undefined {
  const g = VP1_CELLS.exec(sentence)?.groups;
  return g ? report(undefined, { mcc: Number(g.mcc), mnc: Number(g.mnc) }) : undefined;
}

/** `*HQ,id,HTBT,battery%#` (also sent as V0): a keep-alive that the server echoes. */
const HEARTBEAT = /^\*\w{2},\d+,(?:HTBT|V0),(?<battery>\d+)/;

export function decodeHeartbeat(sentence: string): DecodedReport | undefined {
  const g = HEARTBEAT.exec(sentence)?.groups;
  return g ? report(undefined, { batteryLevel: Number(g.battery) }) : undefined;
}

/** `*HQ,id,SMS,<free text, may span lines>#`: a configuration report, kept whole as the result. */
const SMS = /^\*\w{2},\d+,SMS,(?<text>[^#]*)#$/;

export function decodeSms(sentence: string): DecodedReport | undefined {
  const g = SMS.exec(sentence)?.groups;
  return g ? report(undefined, { result: g.text! }) : undefined;
}
