import type { AttributeValue } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';

/** Field readings shared by the TK103 message forms. */

/** A UTC instant, or undefined when the device sent an impossible date (seen: month 00, month 18). */
export function utcDate(year2: number, month: number, day: number, hour = 0, minute = 0, second = 0): Date | undefined {
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 59)) return undefined;
  return new Date(Date.UTC(2000 + year2, month - 1, day, hour, minute, second));
}

export function pairs(sixDigits: string): [number, number, number] {
  return [Number(sixDigits.slice(0, 2)), Number(sixDigits.slice(2, 4)), Number(sixDigits.slice(4, 6))];
}

/** `dddmm.mmmm` with any number of degree digits (even none) and optional leading spaces. */
export function coordinate(text: string, hemisphere: string, max: number): number {
  const match = /^ *(\d*)(\d\d\.\d+)$/.exec(text);
  if (!match) throw new MalformedFrameError(`TK103 coordinate ${text} is unreadable`);
  const minutes = Number(match[2]);
  const value = Number(match[1] || 0) + minutes / 60;
  if (!(minutes < 60 && value <= max)) throw new MalformedFrameError(`TK103 coordinate ${text} is out of range`);
  return hemisphere === 'S' || hemisphere === 'W' ? -value : value;
}

/**
 * Alarms and ignition changes named by the message type itself. The same event has a ZC code
 * (older firmwares), a DW3x code (with GPS fix) and a DW5x code (cell/Wi-Fi only).
 */
const TYPE_EVENTS: Array<[string[], Record<string, AttributeValue>]> = [
  [['ZC11', 'DW31', 'DW51'], { alarm: 'movement' }],
  [['ZC12', 'DW32', 'DW52'], { alarm: 'lowBattery' }],
  [['ZC13', 'DW33', 'DW53'], { alarm: 'powerCut' }],
  [['ZC15', 'DW35', 'DW55', 'ZC29', 'DW42', 'DW62'], { ignition: true }],
  [['ZC16', 'DW36', 'DW56'], { ignition: false }],
  [['ZC17', 'DW37', 'DW57'], { alarm: 'removing' }],
  [['ZC25', 'DW3E', 'DW5E'], { alarm: 'sos' }],
  [['ZC26', 'DW3F', 'DW5F'], { alarm: 'tampering' }],
  [['ZC27', 'DW40', 'DW60'], { alarm: 'lowPower' }],
];
const EVENT_BY_TYPE = new Map(TYPE_EVENTS.flatMap(([types, event]) => types.map((t) => [t, event] as const)));

export function typeEvent(type: string): Record<string, AttributeValue> {
  return { ...EVENT_BY_TYPE.get(type) };
}

/** BQ81 (driving-behaviour alarm) codes. */
export const BQ81_ALARMS = ['lowBattery', 'overspeed', 'idle', 'acceleration', 'braking', 'temperature'];
/** BO01 (alarm with fix) codes, 1-based. */
export const BO01_ALARMS = [undefined, 'accident', 'sos', 'vibration', 'lowspeed', 'overspeed', 'geofenceExit'];
