import type { DecodedPosition } from '../../protocol.ts';
import { newReport, readDateTime, readGps } from './gt06-fix.ts';
import { ack, emit, type Gt06Message, type Gt06Result, type Gt06Record } from './gt06-message.ts';
import type { ByteReader } from '../../codec/byte-reader.ts';
import { ascii, hex, isText } from './gt06-text.ts';

const none: Gt06Result = { positions: [] };

/** 0x21: command answer as text (ASCII or UTF-16BE); "Current position!" answers carry a fix. */
export function decodeStringInfo(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  const serverFlag = r.u32(); // echoed from the command it answers
  const encoding = r.u8();
  const text = (encoding === 1 ? ascii(r.slice(r.remaining)) : utf16be(r.slice(r.remaining))).replace(/\0+$/, '');
  const answer = { text, serial: serverFlag };
  const fix = parseCurrentPosition(text);
  if (fix) return { ...emit(fix, ack(msg)), answer };
  const p = newReport();
  p.attributes.result = text;
  return { ...emit(p, ack(msg)), answer };
}

function utf16be(bytes: Uint8Array): string {
  const even = Buffer.from(bytes.subarray(0, bytes.length & ~1));
  return even.swap16().toString('utf16le');
}

const CURRENT_POSITION =
  /^Current position!Lat:([NS])(\d+\.\d+),Lon:([EW])(\d+\.\d+),Course:(\d+\.\d+),Speed:(\d+\.\d+),DateTime:(\d{4})-(\d\d)-(\d\d) +(\d\d):(\d\d):(\d\d)/;

function parseCurrentPosition(text: string): DecodedPosition | undefined {
  const m = CURRENT_POSITION.exec(text);
  if (!m) return undefined;
  const n = (i: number): number => Number(m[i]);
  return {
    fixTime: new Date(Date.UTC(n(7), n(8) - 1, n(9), n(10), n(11), n(12))),
    valid: true,
    latitude: m[1] === 'S' ? -n(2) : n(2),
    longitude: m[3] === 'W' ? -n(4) : n(4),
    heading: n(5),
    speedKmh: n(6) * 1.852, // the text gives knots
    attributes: {},
  };
}

/** 0x94 information transfer: one sub-type per peripheral or identity report. */
export function decodeInfo(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  const sub = r.u8();
  const p = newReport();
  const a = p.attributes;
  switch (sub) {
    case 0x00:
      a.adc1 = r.u16() / 100;
      break;
    case 0x04:
      a.result = ascii(r.slice(r.remaining)).replace(/\0+$/, '');
      break;
    case 0x05: {
      if (r.remaining >= 7) r.skip(6); // newer firmwares put the event time first
      const flags = r.u8();
      a.door = (flags & 0x01) !== 0;
      a.io1 = (flags & 0x04) !== 0;
      break;
    }
    case 0x0a:
      r.skip(16); // IMEI and IMSI
      a.iccid = hex(r.slice(10)).replace(/f/g, '');
      break;
    case 0x0b:
      // One byte is the radio in use; two bytes are the supply voltage.
      if (r.remaining === 1) {
        a.networkTechnology = p.connectionType = r.u8() === 0 ? '2G' : '4G';
      } else a.power = r.u16() / 100;
      break;
    case 0x0d:
      decodeFuelSensor(p, r);
      break;
    case 0x1b:
      decodeSerialReader(p, r);
      break;
    case 0x1e:
      a.temp1 = (r.u32() | 0) / 10;
      a.humidity = r.u32() / 10;
      break;
    default:
      return { positions: [], reply: ack(msg) };
  }
  return Object.keys(a).length > 0 ? emit(p, ack(msg)) : { positions: [], reply: ack(msg) };
}

/** "!AIOIL,addr,output,temperature,version,codes,measured,moving,..." from an ultrasonic fuel sensor. */
function decodeFuelSensor(p: Gt06Record, r: ByteReader): void {
  if (r.peek() !== 0x21) r.skip(Math.min(6, r.remaining));
  const fields = ascii(r.slice(r.remaining)).split(',');
  if (fields[0] !== '!AIOIL' || fields.length < 7) return;
  const temp = Number(fields[3]);
  const level = Number(fields[6]);
  if (Number.isFinite(temp)) p.attributes.temp1 = temp;
  if (Number.isFinite(level)) p.attributes.fuelLevel = level;
}

/** RFID / iButton reader on the serial port: framed binary tag (STX … ETX) or plain text. */
function decodeSerialReader(p: Gt06Record, r: ByteReader): void {
  if (r.peek() === 0x02) {
    r.skip(2); // STX, tag type
    p.attributes.driverUniqueId = hex(r.slice(4));
    return;
  }
  const text = ascii(r.slice(r.remaining)).trim();
  if (text) p.attributes.serial = text;
}

/** 0x9B: transparent data from a serial peripheral: text when it is text, hex otherwise. */
export function decodeSerial(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  r.u8(); // peripheral type
  const data = r.slice(r.remaining);
  if (data.length === 0) return none;
  const p = newReport();
  p.attributes.result = isText(data) ? ascii(data).trim() : hex(data);
  return emit(p, ack(msg));
}

/** 0x8C OBD: time, ACC, then "PID=hexvalue," pairs; the PID's first two hex digits, read as a number, name it. */
const OBD_KEYS = new Map<number, string>([
  [40, 'odometer'],
  [43, 'fuelLevel'],
  [45, 'coolantTemp'],
  [53, 'obdSpeed'],
  [54, 'rpm'],
  [71, 'fuelUsed'],
  [73, 'hours'],
]);

export function decodeObd(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  const p = newReport(readDateTime(r, msg.state));
  p.attributes.ignition = r.u8() > 0;
  const text = ascii(r.slice(Math.max(0, r.remaining - 12)));
  for (const pair of text.split(',')) {
    const [key, value] = pair.split('=');
    if (!key || key.length < 2 || value === undefined || value === '') continue;
    const pid = Number.parseInt(key.slice(0, 2), 16);
    if (pid === 74) p.attributes.vin = value;
    const name = OBD_KEYS.get(pid);
    const n = Number.parseInt(value, 16);
    if (name && Number.isFinite(n)) p.attributes[name] = n / 100;
  }
  return emit(p, ack(msg));
}

/** Extended-frame GPS (0x38 and similar): the common fix block, rest not yet mapped. */
export function decodeExtendedGps(msg: Gt06Message): Gt06Result {
  const p = readGps(msg.body, msg.state)!;
  return emit(p, ack(msg));
}

