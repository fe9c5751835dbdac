import type { AttributeValue } from '../../protocol.ts';

/**
 * Teltonika AVL IO elements by id (FMB/FMC/FMM families), mapped to attribute names; any other id is
 * kept raw as `io<id>`. Values of 1, 2 and 4 bytes arrive as numbers, 8-byte ones as bigints.
 */
type Attributes = Record<string, AttributeValue>;
type IoValue = number | bigint;

/**
 * How one IO id becomes an attribute. Plain flags and numbers are data (kind, name, scale) read by one
 * `switch`, not a closure per id: the call stays monomorphic and this runs for every IO of every record.
 */
const FLAG = 0;
const NUMBER = 1;
const SIGNED = 2;
const SPECIAL = 3;
interface IoMapping {
  kind: typeof FLAG | typeof NUMBER | typeof SIGNED | typeof SPECIAL;
  name: string;
  scale: number;
  /** Only for SPECIAL: writes whatever the value means (alarms, a driver key). */
  apply: ((into: Attributes, value: IoValue) => void) | undefined;
}

const signed = (value: IoValue, size: number): number =>
  typeof value === 'bigint' ? Number(BigInt.asIntN(64, value)) : size === 4 ? value | 0 : size === 2 ? (value << 16) >> 16 : (value << 24) >> 24;
// Scaled values are rounded so that 12458 mV reads 12.458 V, not 12.458000000000002.
const scaled = (value: number, scale: number) => (scale === 1 ? value : Math.round(value * scale * 1e6) / 1e6);
const flag = (name: string): IoMapping => ({ kind: FLAG, name, scale: 1, apply: undefined });
const number = (name: string, scale = 1): IoMapping => ({ kind: NUMBER, name, scale, apply: undefined });
const signedNumber = (name: string, scale = 1): IoMapping => ({ kind: SIGNED, name, scale, apply: undefined });
const special = (apply: (into: Attributes, value: IoValue) => void): IoMapping => ({ kind: SPECIAL, name: '', scale: 1, apply });

/** A driver key (iButton 78, RFID card 207; 8 bytes): the 16 hex digits printed on an iButton; 0 is no key. */
const driverKey = special((into, v) => {
  if (BigInt(v) !== 0n) into.driverUniqueId = BigInt(v).toString(16).toUpperCase().padStart(16, '0');
});

const MAPPINGS = new Map<number, IoMapping>([
  [1, flag('in1')],
  [2, flag('in2')],
  [3, flag('in3')],
  [4, flag('in4')],
  [9, number('adc1', 0.001)],
  [10, number('adc2', 0.001)],
  [16, number('odometer')], // total odometer, metres
  [21, number('rssi')], // GSM signal, 0 to 5 (teltonika-radio.ts gives it on 0–31)
  [24, number('obdSpeed')],
  [48, number('fuel')], // fuel level from OBD, percent
  [66, number('power', 0.001)], // external voltage, mV
  [67, number('battery', 0.001)], // battery voltage, mV
  [68, number('batteryCurrent', 0.001)],
  [69, number('gnssStatus')],
  [84, number('fuelVolume', 0.1)], // fuel level from CAN (LVCAN/ALL-CAN), 0.1 litres
  [89, number('fuel')], // fuel level from CAN, percent
  [72, signedNumber('temp1', 0.1)],
  [73, signedNumber('temp2', 0.1)],
  [74, signedNumber('temp3', 0.1)],
  [75, signedNumber('temp4', 0.1)],
  [78, driverKey], // iButton
  [113, number('batteryLevel')],
  [179, flag('out1')],
  [180, flag('out2')],
  [181, number('pdop', 0.1)],
  [182, number('hdop', 0.1)],
  [199, number('tripOdometer')],
  [200, number('sleepMode')],
  [205, number('cellId')],
  [206, number('lac')],
  [207, driverKey], // RFID card
  [236, special((into, v) => {
    if (Number(v) === 1) into.alarm = 'general';
  })],
  [237, number('networkType')], // 0 3G, 1 2G, 2 4G, 3 LTE Cat M1, 4 LTE Cat NB1 (teltonika-radio.ts)
  [239, flag('ignition')],
  [240, flag('motion')],
  [241, number('operator')],
  [253, special((into, v) => {
    const kind = ['', 'hardAcceleration', 'hardBraking', 'hardCornering'][Number(v)];
    if (kind) into.alarm = kind;
  })],
]);

// EYE sensors: four temperatures (signed, hundredths of °C), then four humidities (%).
for (let i = 0; i < 4; i++) {
  MAPPINGS.set(10800 + i, signedNumber(`eyeTemp${i + 1}`, 0.01));
  MAPPINGS.set(10804 + i, number(`eyeHumidity${i + 1}`));
}

/** Ids below 256 (nearly every IO a device sends) by array index, which is cheaper than a Map lookup. */
const LOW_IDS: Array<IoMapping | undefined> = Array.from({ length: 256 }, (_, id) => MAPPINGS.get(id));

const RAW_NAMES = new Map<number, string>();
function rawName(id: number): string {
  let name = RAW_NAMES.get(id);
  if (name === undefined) RAW_NAMES.set(id, (name = `io${id}`));
  return name;
}

export function applyIo(into: Attributes, id: number, value: IoValue, size: number): void {
  const mapping = id < 256 ? LOW_IDS[id] : MAPPINGS.get(id);
  if (mapping === undefined) {
    into[rawName(id)] = typeof value === 'number' || value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
    return;
  }
  switch (mapping.kind) {
    case FLAG:
      into[mapping.name] = Number(value) === 1;
      break;
    case NUMBER:
      into[mapping.name] = scaled(Number(value), mapping.scale);
      break;
    case SIGNED:
      into[mapping.name] = scaled(signed(value, size), mapping.scale);
      break;
    case SPECIAL:
      mapping.apply!(into, value);
      break;
  }
}
