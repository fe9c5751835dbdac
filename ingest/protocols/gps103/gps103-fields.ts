import type { AttributeValue } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';

/** The message type (second field) names the alarms; the names follow the house vocabulary. */
const ALARMS: Record<string, string> = {
  'help me': 'sos',
  'low battery': 'lowBattery',
  stockade: 'geofence',
  move: 'movement',
  speed: 'overspeed',
  'door alarm': 'door',
  'ac alarm': 'powerCut',
  'accident alarm': 'accident',
  'sensor alarm': 'vibration',
  'bonnet alarm': 'bonnet',
  'footbrake alarm': 'footBrake',
  DTC: 'fault',
};

/**
 * What the type field says: an alarm, an ignition change, a temperature (`T:+28.0`), a fuel level
 * (`oil 51.67`), a driver's tag (`rfid`, the tag in the next-but-one field), a command's answer
 * (`jt`, kept as `result`), or, for any other type
 * than the periodic `tracker`, the type itself as `event`.
 */
export function typeAttributes(type: string, rfid: string): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  const alarm = ALARMS[type] ?? (type.startsWith('T:') ? 'temperature' : type.startsWith('oil') ? 'fuelLeak' : undefined);
  if (alarm) attributes.alarm = alarm;
  if (type === 'acc on') attributes.ignition = true;
  else if (type === 'acc off') attributes.ignition = false;
  else if (type.startsWith('T:')) {
    const t = Number(type.slice(2));
    if (Number.isFinite(t) && /^T:[-+]?\d+(\.\d+)?$/.test(type)) attributes.temp1 = t;
  } else if (type.startsWith('oil ')) {
    const level = type.slice(4);
    if (/^\d+(\.\d+)?$/.test(level)) attributes.fuelLevel = Number(level);
  } else if (type === 'rfid') {
    if (rfid) attributes.driverUniqueId = rfid;
  } else if (/^[a-z][tf]$/.test(type)) {
    // A command's answer (`jt`, `kt`, `lf`…): the result, as other protocols keep answers.
    attributes.result = type;
  } else if (!alarm && type !== 'tracker' && type !== '' && !/^vt\d+$/.test(type)) attributes.event = type;
  return attributes;
}

/** A calendar time, or undefined when a field is out of range (no silent roll-over). */
export function utcTime(year: number, month: number, day: number, hour: number, minute: number, second: number): Date | undefined {
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 59)) return undefined;
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  return date.getUTCDate() === day ? date : undefined;
}

/** `d…dmm.mmmm` (at least one degree digit), signed by its hemisphere letter. */
export function coordinate(degrees: string, minutes: string, hemisphere: string | undefined, max: number): number {
  const m = Number(minutes);
  const value = Number(degrees) + m / 60;
  if (!(m < 60 && value <= max)) throw new MalformedFrameError(`GPS103 coordinate ${degrees}${minutes} is out of range`);
  return hemisphere === 'S' || hemisphere === 'W' ? -value : value;
}

/** The tracker's GSM signal (CSQ, 0–31; 99 unknown) as the 0–31 signal strength. */
export function signalOf(rssi: number): number | undefined {
  return rssi >= 0 && rssi <= 31 ? rssi : undefined;
}
