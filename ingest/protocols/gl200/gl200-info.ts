import type { AttributeValue, DecodedRadio } from '../../protocol.ts';
import { signalFromCsq } from '../../../domain/device-signal.ts';
import { gl200Time, num, type Gl200Message } from './gl200-message.ts';

/**
 * GTINF, the periodic device information report (no fix of its own):
 *   <state>,<ICCID>,<csq rssi>,<csq ber>,<external power supply>,<power mV>,<power2 mV>,
 *   <backup battery V>,<charging>,<led>,...,<last fix time>,<battery %>,<adc1>,<adc2>,<adc3>,...
 * Battery-only models (GL300) put their mileage where vehicle models put the supply voltage.
 */

/** Supply voltages come in millivolts; a decimal there is mileage on models without a supply. */
function volts(field: string | undefined): number | undefined {
  return field !== undefined && /^\d+$/.test(field) ? Number(field) / 1000 : undefined;
}

export function infAttributes(msg: Gl200Message, a: Record<string, AttributeValue>): void {
  const f = msg.fields;
  const b = msg.body + 1; // after the device name
  if (f[b + 1]) a.iccid = f[b + 1]!;
  const rssi = num(f[b + 2]);
  if (rssi !== undefined) a.rssi = rssi;
  const power = volts(f[b + 5]);
  if (power !== undefined) a.power = power;
  const power2 = volts(f[b + 6]);
  if (power2 !== undefined) a.power2 = power2;
  const battery = num(f[b + 7]);
  if (battery !== undefined) a.battery = battery;
  const charging = f[b + 8];
  if (charging === '0' || charging === '1') a.charge = charging === '1';
  // The last fix time anchors the rest; it is the first full timestamp after the voltages.
  const end = msg.sendTime ? f.length - 2 : f.length - 1;
  let at = -1;
  for (let i = b + 8; i < end; i++) {
    if (gl200Time(f[i])) {
      at = i;
      break;
    }
  }
  if (at < 0) return;
  const level = num(f[at + 1]);
  if (level !== undefined && Number.isInteger(level) && level <= 100) a.batteryLevel = level;
  for (let k = 1; k <= 3; k++) {
    const adc = f[at + 1 + k];
    if (adc !== undefined && /^\d+$/.test(adc) && at + 1 + k < end) a[`adc${k}`] = Number(adc);
  }
}

/**
 * The radio of a message's attributes: the CSQ RSSI that GTINF reports (`rssi`) is the modem's, already
 * the specification's 0–31 scale (99: not known). The network type some models add is not read: its
 * codes differ by model, so no connection type is given.
 */
export function gl200Radio(a: Record<string, AttributeValue>): DecodedRadio {
  const signal = typeof a.rssi === 'number' ? signalFromCsq(a.rssi) : undefined;
  return signal === undefined ? {} : { signalStrength: signal };
}
