import type { AttributeValue } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';

/** Field readings shared by the Suntech message forms. */

export type Attributes = Record<string, AttributeValue>;

/** `yyyymmdd` and `hh:mm:ss`, UTC; undefined when either is missing or impossible. */
export function dateTime(date: string | undefined, time: string | undefined): Date | undefined {
  const d = /^(\d{4})(\d\d)(\d\d)$/.exec(date ?? '');
  const t = /^(\d\d):(\d\d):(\d\d)$/.exec(time ?? '');
  if (!d || !t) return undefined;
  const [y, mo, da, h, mi, s] = [d[1], d[2], d[3], t[1], t[2], t[3]].map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || da < 1 || da > 31 || h > 23 || mi > 59 || s > 59) return undefined;
  const result = new Date(Date.UTC(y, mo - 1, da, h, mi, s));
  return result.getUTCDate() === da ? result : undefined;
}

/** A decimal number, or a MalformedFrameError naming the field. */
export function num(value: string | undefined, field: string): number {
  const n = value === undefined || value.trim() === '' ? NaN : Number(value);
  if (!Number.isFinite(n)) throw new MalformedFrameError(`Suntech ${field} is not a number: ${JSON.stringify(value)}`);
  return n;
}

export function int(value: string | undefined, field: string, radix = 10): number {
  const text = (value ?? '').trim();
  const ok = radix === 16 ? /^[0-9A-Fa-f]+$/.test(text) : /^[-+]?\d+$/.test(text);
  if (!ok) throw new MalformedFrameError(`Suntech ${field} is not a whole number: ${JSON.stringify(value)}`);
  return parseInt(text, radix);
}

export function coordinate(value: string | undefined, limit: number, field: string): number {
  const n = num(value, field);
  if (Math.abs(n) > limit) throw new MalformedFrameError(`Suntech ${field} ${n} out of range`);
  return n;
}

/** Emergency codes of the EMG message (ST300/ST600 family). */
export function emergencyAlarm(code: number): string | undefined {
  return ({ 1: 'sos', 2: 'parking', 3: 'powerCut', 5: 'door', 6: 'door', 7: 'movement', 8: 'vibration' } as Record<number, string>)[code];
}

/** Alert codes of the ALT message, shared by the legacy, universal and binary forms. */
export function alertAlarm(code: number): string | undefined {
  return (
    {
      1: 'overspeed',
      5: 'geofenceExit',
      6: 'geofenceEnter',
      14: 'lowBattery',
      15: 'vibration',
      16: 'accident',
      40: 'powerRestored',
      41: 'powerCut',
      42: 'sos',
      46: 'hardAcceleration',
      47: 'hardBraking',
      50: 'jamming',
    } as Record<number, string>
  )[code];
}

/** GSM dBm (-113 … -51) to the 0–31 scale. */
export function dbmToSignal(dbm: number): number | undefined {
  if (!Number.isFinite(dbm) || dbm >= 0) return undefined;
  return Math.max(0, Math.min(31, Math.round((dbm + 113) / 2)));
}
