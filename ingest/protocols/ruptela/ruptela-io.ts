import type { AttributeValue } from '../../protocol.ts';

/** An IO element's value: 1, 2, 4 or 8 bytes, big-endian. */
export function ioValue(bytes: Uint8Array, at: number, length: number, signed: boolean): number | bigint {
  let v = 0n;
  for (let i = 0; i < length; i++) v = (v << 8n) | BigInt(bytes[at + i]!);
  if (signed) v = BigInt.asIntN(length * 8, v);
  return length === 8 ? v : Number(v);
}

const num = (v: number | bigint): number => Number(v);
/** 8-byte values beyond 2^53 stay exact as decimal text. */
const raw = (v: number | bigint): AttributeValue => (typeof v === 'bigint' ? (v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString()) : v);

/** Alarms an IO id raises when its value is non-zero (or, for `whenZero`, zero). */
const ALARMS: Record<number, { alarm: string; when: 'nonzero' | 'zero' | 'one' }> = {
  88: { alarm: 'jamming', when: 'nonzero' },
  134: { alarm: 'hardBraking', when: 'nonzero' },
  136: { alarm: 'hardAcceleration', when: 'nonzero' },
  410: { alarm: 'tow', when: 'nonzero' },
  411: { alarm: 'accident', when: 'nonzero' },
  415: { alarm: 'gpsAntennaCut', when: 'zero' },
  758: { alarm: 'tampering', when: 'one' },
};

/** Scaled or renamed IO ids (Ruptela's IO list): name, whether signed, and the scale. */
const NAMED: Record<number, { name: string; signed?: boolean; scale?: (v: number) => AttributeValue }> = {
  2: { name: 'in1' },
  3: { name: 'in2' },
  4: { name: 'in3' },
  5: { name: 'in4' },
  13: { name: 'motion', scale: (v) => v > 0 },
  173: { name: 'motion', scale: (v) => v > 0 },
  20: { name: 'adc3' },
  21: { name: 'adc4' },
  22: { name: 'adc1' },
  23: { name: 'adc2' },
  29: { name: 'power', scale: (v) => v * 0.001 },
  30: { name: 'battery', scale: (v) => v * 0.001 },
  32: { name: 'deviceTemp', signed: true },
  39: { name: 'engineLoad' },
  65: { name: 'odometer' },
  74: { name: 'temp3', signed: true, scale: (v) => v * 0.1 },
  78: { name: 'temp0', signed: true, scale: (v) => v * 0.1 },
  79: { name: 'temp1', signed: true, scale: (v) => v * 0.1 },
  80: { name: 'temp2', signed: true, scale: (v) => v * 0.1 },
  94: { name: 'rpm', scale: (v) => v * 0.25 },
  95: { name: 'obdSpeed' },
  98: { name: 'fuel', scale: (v) => (v * 100) / 255 },
  100: { name: 'fuelConsumption', scale: (v) => v / 20 },
  150: { name: 'operator' },
  163: { name: 'odometer', scale: (v) => v * 5 },
  164: { name: 'tripOdometer', scale: (v) => v * 5 },
  165: { name: 'obdSpeed', scale: (v) => v / 256 },
  166: { name: 'rpm', scale: (v) => v * 0.125 },
  197: { name: 'rpm', scale: (v) => v * 0.125 },
  170: { name: 'charge', scale: (v) => v > 0 },
  205: { name: 'fuel' },
  207: { name: 'fuel', scale: (v) => v * 0.4 },
  208: { name: 'fuelUsed', scale: (v) => v * 0.5 },
  251: { name: 'ignition', scale: (v) => v > 0 },
  409: { name: 'ignition', scale: (v) => v > 0 },
  645: { name: 'obdOdometer', scale: (v) => v * 1000 },
};

function addAlarm(attributes: Record<string, AttributeValue>, alarm: string): void {
  const prior = attributes.alarm;
  attributes.alarm = typeof prior === 'string' && prior.length > 0 ? `${prior},${alarm}` : alarm;
}

/** One IO element into the record's attributes: known ids by name, the rest as io<N>. */
export function applyIo(attributes: Record<string, AttributeValue>, id: number, bytes: Uint8Array, at: number, length: number): void {
  if (id === 27) {
    // GSM signal level on the 0-31 scale (CSQ); 99 or 255 when unknown.
    attributes.rssi = bytes[at + length - 1]!;
    return;
  }
  if (id === 34) {
    attributes.driverUniqueId = Buffer.from(bytes.subarray(at, at + length)).toString('hex');
    return;
  }
  const alarm = ALARMS[id];
  if (alarm) {
    const v = num(ioValue(bytes, at, length, false));
    if ((alarm.when === 'nonzero' && v > 0) || (alarm.when === 'zero' && v === 0) || (alarm.when === 'one' && v === 1)) addAlarm(attributes, alarm.alarm);
    return;
  }
  const named = NAMED[id];
  if (named) {
    const v = num(ioValue(bytes, at, length, named.signed ?? false));
    attributes[named.name] = named.scale ? named.scale(v) : v;
    return;
  }
  attributes[`io${id}`] = raw(ioValue(bytes, at, length, false));
}

/** Two io values holding an 8-byte ASCII id each half, as the CAN (126/127) and tachograph (155/156) drivers come. */
export function joinDriver(attributes: Record<string, AttributeValue>, first: string, second: string): void {
  const a = attributes[first];
  const b = attributes[second];
  if (a === undefined || b === undefined) return;
  delete attributes[first];
  delete attributes[second];
  const buf = Buffer.alloc(16);
  buf.writeBigUInt64BE(BigInt.asUintN(64, BigInt(a)), 0);
  buf.writeBigUInt64BE(BigInt.asUintN(64, BigInt(b)), 8);
  // Unused card slots come as zeros: no driver, not an id of NULs.
  const id = buf.toString('latin1').replace(/\0+$/, '');
  if (id.length > 0) attributes.driverUniqueId = id;
}

/** RFID tag split over io760 and io761: the two halves in hex. */
export function joinTag(attributes: Record<string, AttributeValue>): void {
  const a = attributes.io760;
  const b = attributes.io761;
  if (a === undefined || b === undefined) return;
  delete attributes.io760;
  delete attributes.io761;
  attributes.tagId = BigInt(a).toString(16) + BigInt(b).toString(16);
}
