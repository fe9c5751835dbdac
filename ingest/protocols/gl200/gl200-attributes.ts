import type { AttributeValue } from '../../protocol.ts';
import type { Gl200Fix } from './gl200-location.ts';
import { hexNum, num, type Gl200Message } from './gl200-message.ts';

/**
 * Values that sit outside the location run and depend on the message type: alarms named by the
 * type itself, ignition, the battery and device-status fields after the last fix, and the
 * accessory data of GTERI, GTBAA/GTBID, GTDAT, GTDTT and GTDAR, and the driver key of GTIDA.
 */

type Attributes = Record<string, AttributeValue>;

const TYPE_ALARMS: Record<string, string> = {
  SOS: 'sos', PFA: 'powerOff', PNA: 'powerOn', MPF: 'powerCut', MPN: 'powerRestored',
  BPL: 'lowBattery', SPD: 'overspeed', JDR: 'jamming', TOW: 'tow', CRA: 'accident',
};

/** GTHBM: the last digit of the report type says which harsh event it was. */
const HARSH: Record<string, string> = { '0': 'hardBraking', '1': 'hardAcceleration', '2': 'hardCornering' };

const IGNITION: Record<string, boolean> = { IGN: true, VGN: true, IGF: false, VGF: false };

const PERCENT = /^\d{1,3}$/;

/** The alarm or ignition change a report type stands for (`BPL`, `IGN`, ...), shared with the binary reports. */
export function namedTypeAttributes(type: string, a: Attributes): void {
  const alarm = TYPE_ALARMS[type];
  if (alarm) a.alarm = alarm;
  const ignition = IGNITION[type];
  if (ignition !== undefined) a.ignition = ignition;
}

export function typeAttributes(msg: Gl200Message, fixes: Gl200Fix[], a: Attributes): void {
  namedTypeAttributes(msg.type, a);
  const first = fixes[0];
  if (msg.type === 'HBM' && first) {
    const harsh = HARSH[(msg.fields[first.at - 8] ?? '').slice(-1)];
    if (harsh) a.alarm = harsh;
  }
  if (msg.type === 'CTN' && first) setPercent(msg.fields[first.at - 7], a);
  if (msg.type === 'DAR') {
    const warning = num(msg.fields[msg.body + 1]);
    if (warning !== undefined) a.warningType = warning;
  }
  if (msg.type === 'DAT') {
    const data = msg.fields[first ? msg.body + 4 : msg.body + 1];
    if (data) a.data = data;
  }
  if (msg.type === 'IDA') driverId(msg, a);
  if (msg.type === 'DTT') transparentData(msg, a);
  if (msg.type === 'BAA' || msg.type === 'BID') accessory(msg.fields, a);
}

function setPercent(field: string | undefined, a: Attributes): boolean {
  if (field === undefined || !PERCENT.test(field) || Number(field) > 100) return false;
  a.batteryLevel = Number(field);
  return true;
}

/**
 * The fields between the last fix's cell id and the send time. GL300-style devices put
 * `<battery %>,<device status>` there (status: motion state, inputs, outputs as hex pairs); GL50x
 * asset trackers write `<csq>,<?>,,<battery %>,...`; older GL300 firmware ends with the battery.
 */
export function tailAttributes(msg: Gl200Message, last: Gl200Fix, a: Attributes): number | undefined {
  const end = msg.sendTime ? msg.fields.length - 2 : msg.fields.length - 1;
  const tail = msg.fields.slice(last.at + 5, Math.max(end, last.at + 5));
  for (let k = 1; k < tail.length; k++) {
    if (!/^[0-9A-F]{6}$/.test(tail[k]!) || !setPercent(tail[k - 1], a)) continue;
    const status = tail[k]!;
    const state = status.slice(0, 2);
    if (state[0] === '1' || state[0] === '2') a.ignition = state[0] === '2';
    const input = parseInt(status.slice(2, 4), 16);
    const output = parseInt(status.slice(4, 6), 16);
    a.input = input;
    a.output = output;
    // Bit 0 of the input byte is the ignition line; numbered inputs start at bit 1.
    for (let bit = 1; bit <= 4; bit++) a[`in${bit}`] = (input & (1 << bit)) !== 0;
    return last.at + 5 + k;
  }
  if (!['FRI', 'ERI', 'NMR'].includes(msg.type)) return undefined;
  if (tail.length >= 7 && tail[2] === '' && setPercent(tail[3], a)) return undefined;
  setPercent(tail[tail.length - 1], a);
  return undefined;
}

/** GTERI extras after the device status: 1-wire temperatures (mask bit 1) or a fuel sensor (bit 0). */
export function eriAttributes(msg: Gl200Message, statusAt: number | undefined, a: Attributes): void {
  const mask = hexNum(msg.fields[msg.body + 1]);
  if (mask === undefined || statusAt === undefined) return;
  const end = msg.sendTime ? msg.fields.length - 2 : msg.fields.length - 1;
  const rest = msg.fields.slice(statusAt + 1, end);
  if (mask & 2) {
    // <count>,(<16-hex sensor id>,<type>,<hex 1/16 °C>)*count
    let index = 1;
    for (let i = 0; i + 2 < rest.length; i++) {
      if (!/^[0-9A-F]{16}$/.test(rest[i]!)) continue;
      const raw = hexNum(rest[i + 2]);
      if (raw !== undefined && rest[i + 2]!.length === 4) a[`temp${index++}`] = (raw >= 0x8000 ? raw - 0x10000 : raw) * 0.0625;
      i += 2;
    }
  } else if (mask & 1) {
    const fuel = rest[rest.length - 1];
    if (fuel !== undefined && /^[0-9A-F]{4}$/.test(fuel)) a.fuel = parseInt(fuel, 16);
  }
}

/** GTIDA: `<device name>,<reserved>,<ID>,<ID report type>,...`: the iButton or RFID card the reader saw, in hex. */
function driverId(msg: Gl200Message, a: Attributes): void {
  const id = msg.fields[msg.body + 2];
  if (id !== undefined && /^[0-9A-Fa-f]{1,64}$/.test(id) && /[1-9A-Fa-f]/.test(id)) a.driverUniqueId = id.toUpperCase();
}

/** GTBAA/GTBID: a BLE accessory. `<append mask hex4>,[name],<MAC>,[status],[voltage mV],...` */
function accessory(fields: string[], a: Attributes): void {
  const macAt = fields.findIndex((f, i) => i > 3 && /^[0-9A-F]{12}$/.test(f));
  if (macAt < 0) return;
  a.accessoryMac = fields[macAt]!;
  const mask = hexNum(fields[macAt - 1]) ?? hexNum(fields[macAt - 2]) ?? 0;
  let i = macAt + 1;
  if (mask & 4) i++; // status
  if (mask & 8) {
    const mv = num(fields[i]);
    if (mv !== undefined) a.accessoryVoltage = mv / 1000;
  }
}

/** GTDTT: transparent serial data in hex; Ecuatrack fuel probes answer `COMB,<n>,<fuel>,...`. */
function transparentData(msg: Gl200Message, a: Attributes): void {
  const hex = msg.fields.find((f, i) => i > msg.body && f.length > 8 && f.length % 2 === 0 && /^[0-9a-fA-F]+$/.test(f));
  if (!hex) return;
  const text = Buffer.from(hex, 'hex').toString('latin1');
  a.result = text.trim();
  const comb = /COMB,[^,]*,(-?\d+(?:\.\d+)?)/.exec(text);
  if (comb) a.fuel = Number(comb[1]);
}
