import type { AttributeValue } from '../../protocol.ts';
import { num } from './gl200-message.ts';

/**
 * GTCAN (and the CAN part of GTERI on GV355/GV350 models): a 32-bit hex mask says which vehicle
 * bus values follow, one field per set bit from bit 0 upwards. Bit 29 announces a second mask
 * with further values (AdBlue first). Values may carry a unit prefix: `H` hectometres for
 * distance, `P` percent or `L` litres for fuel.
 */

type Reader = (value: string, a: Record<string, AttributeValue>) => void;

/** Prefixed number: `P94.80` → 94.8; plain numbers pass through. */
function prefixed(value: string): number | undefined {
  return num(value.replace(/^[A-Z]+\/?[A-Z]*/, ''));
}

const set = (key: string): Reader => (value, a) => {
  const v = prefixed(value);
  if (v !== undefined) a[key] = v;
};

/** Bits 0..19 of the main mask, in field order. */
const MAIN: Array<Reader | undefined> = [
  (value, a) => { if (value) a.vin = value; },
  (value, a) => { if (value === '0' || value === '1') a.ignition = value === '1'; },
  (value, a) => {
    const v = prefixed(value);
    // `H` values count hectometres; plain values are kilometres with decimals.
    if (v !== undefined) a.obdOdometer = value.startsWith('H') ? v * 100 : v * 1000;
  },
  set('fuelUsed'),
  set('rpm'),
  set('obdSpeed'),
  set('coolantTemp'),
  set('fuelConsumption'),
  (value, a) => {
    const v = prefixed(value);
    if (v !== undefined) a[value.startsWith('L') ? 'fuelVolume' : 'fuel'] = v;
  },
  set('range'),
  set('throttle'),
  set('hours'),
  set('drivingTime'),
  set('idleTime'),
  set('idleFuelConsumption'),
  set('axleWeight'),
  undefined, // tachograph information
  undefined, // indicators
  undefined, // lights
  undefined, // doors
];

const EXPANSION: Array<Reader | undefined> = [set('adBlueLevel')];

const EXPANSION_BIT = 29;

/** Reads the mask at `fields[at]` and the values after it; returns the index after the last one. */
export function readCanData(fields: string[], at: number, a: Record<string, AttributeValue>): number {
  const mask = parseInt(fields[at] ?? '', 16);
  if (!/^[0-9A-Fa-f]{8}$/.test(fields[at] ?? '')) return at;
  let i = at + 1;
  for (let bit = 0; bit < EXPANSION_BIT; bit++) {
    if (!(mask & (1 << bit))) continue;
    const value = fields[i++];
    if (value !== undefined) MAIN[bit]?.(value, a);
  }
  if (mask & (1 << EXPANSION_BIT) && /^[0-9A-Fa-f]{8}$/.test(fields[i] ?? '')) {
    const expansion = parseInt(fields[i++]!, 16);
    for (let bit = 0; bit < EXPANSION.length; bit++) {
      if (!(expansion & (1 << bit))) continue;
      const value = fields[i++];
      if (value !== undefined) EXPANSION[bit]?.(value, a);
    }
  }
  return i;
}
