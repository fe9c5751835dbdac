import type { AttributeValue } from '../../protocol.ts';

/**
 * Teltonika AVL IO elements by id (FMB/FMC/FMM families), mapped to attribute names; any other id is
 * kept raw as `io<id>`. Values arrive as unsigned integers of 1, 2, 4 or 8 bytes.
 */
type IoMapping = (value: bigint, size: number) => Record<string, AttributeValue>;

const signed = (value: bigint, size: number): number => Number(BigInt.asIntN(size * 8, value));
// Scaled values are rounded so that 12458 mV reads 12.458 V, not 12.458000000000002.
const scaled = (value: number, scale: number) => (scale === 1 ? value : Math.round(value * scale * 1e6) / 1e6);
const flag = (name: string): IoMapping => (v) => ({ [name]: v === 1n });
const number = (name: string, scale = 1): IoMapping => (v) => ({ [name]: scaled(Number(v), scale) });
const signedNumber = (name: string, scale = 1): IoMapping => (v, size) => ({ [name]: scaled(signed(v, size), scale) });

const none: Record<string, AttributeValue> = {};

const MAPPINGS = new Map<number, IoMapping>([
  [1, flag('in1')],
  [2, flag('in2')],
  [3, flag('in3')],
  [4, flag('in4')],
  [9, number('adc1', 0.001)],
  [10, number('adc2', 0.001)],
  [16, number('odometer')], // total odometer, metres
  [21, number('rssi')], // GSM signal, 0 to 5
  [24, number('obdSpeed')],
  [66, number('power', 0.001)], // external voltage, mV
  [67, number('battery', 0.001)], // battery voltage, mV
  [68, number('batteryCurrent', 0.001)],
  [69, number('gnssStatus')],
  [72, signedNumber('temp1', 0.1)],
  [73, signedNumber('temp2', 0.1)],
  [74, signedNumber('temp3', 0.1)],
  [75, signedNumber('temp4', 0.1)],
  [78, (v) => (v === 0n ? none : { driverUniqueId: v.toString(16).toUpperCase().padStart(16, '0') })], // iButton
  [113, number('batteryLevel')],
  [179, flag('out1')],
  [180, flag('out2')],
  [181, number('pdop', 0.1)],
  [182, number('hdop', 0.1)],
  [199, number('tripOdometer')],
  [200, number('sleepMode')],
  [205, number('cellId')],
  [206, number('lac')],
  [236, (v) => (v === 1n ? { alarm: 'general' } : none)],
  [239, flag('ignition')],
  [240, flag('motion')],
  [241, number('operator')],
  [253, (v) => {
    const kind = ({ 1: 'hardAcceleration', 2: 'hardBraking', 3: 'hardCornering' } as Record<string, string>)[String(v)];
    return kind ? { alarm: kind } : none;
  }],
]);

// EYE sensors: four temperatures (signed, hundredths of °C), then four humidities (%).
for (let i = 0; i < 4; i++) {
  MAPPINGS.set(10800 + i, signedNumber(`eyeTemp${i + 1}`, 0.01));
  MAPPINGS.set(10804 + i, number(`eyeHumidity${i + 1}`));
}

function raw(id: number, value: bigint): Record<string, AttributeValue> {
  return { [`io${id}`]: value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString() };
}

export function ioAttributes(id: number, value: bigint, size: number): Record<string, AttributeValue> {
  return (MAPPINGS.get(id) ?? ((v: bigint) => raw(id, v)))(value, size);
}
