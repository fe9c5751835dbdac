import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newReport, readGps } from './gt06-fix.ts';
import { ack, emit, type Gt06Message, type Gt06Result, type Gt06Record } from './gt06-message.ts';
import { ByteReader } from '../../codec/byte-reader.ts';
import { hex } from './gt06-text.ts';
import { alarmName, applyGsmLevel, applyTerminalInfo, readStatusBlock } from './gt06-status.ts';

/**
 * Cell-tower block flavours: `short` = MCC 2, MNC 1 (2 when MCC bit 15 is set), LAC 2, cell 3;
 * `long` = MNC 2 and cell 4 (0x11); `lte` = LAC 4 and cell 8 (the 4G "A" messages).
 */
type Lbs = 'short' | 'long' | 'lte';

interface Layout {
  gps: boolean;
  lbs?: Lbs;
  /** The LBS block starts with its own length byte. */
  lbsLength?: boolean;
  /** Bytes of status block at the end of the body (terminal info, voltage, GSM, alarm, language). */
  statusTail?: number;
  /** ACC / upload reason / re-upload flag after the LBS block. */
  accEvent?: boolean;
}

const LAYOUTS = new Map<number, Layout>([
  [0x10, { gps: true }],
  [0x11, { gps: true, lbs: 'long' }],
  [0x12, { gps: true, lbs: 'short' }],
  [0x16, { gps: true, lbs: 'short', lbsLength: true, statusTail: 5 }],
  [0x1a, { gps: true }],
  [0x1e, { gps: true }],
  [0x22, { gps: true, lbs: 'short', accEvent: true }],
  [0x26, { gps: true, lbs: 'short', lbsLength: true, statusTail: 5 }],
  [0x25, { gps: true, lbs: 'short', lbsLength: true }],
  [0x27, { gps: true, lbs: 'short', lbsLength: true, statusTail: 6 }],
  [0x31, { gps: true, lbs: 'long' }],
  [0x32, { gps: true, lbs: 'short', lbsLength: true }],
  [0x2d, { gps: true, lbs: 'short', accEvent: true }],
  [0x37, { gps: true, lbs: 'short', accEvent: true }],
  [0xa0, { gps: true, lbs: 'lte', accEvent: true }],
  [0xa3, { gps: true, lbs: 'lte', lbsLength: true, statusTail: 6 }],
  [0xa4, { gps: true, lbs: 'lte', lbsLength: true, statusTail: 6 }],
  [0x19, { gps: false, lbs: 'short', statusTail: 5 }],
  [0xa5, { gps: false, lbs: 'lte', statusTail: 5 }],
  [0xa7, { gps: false, lbs: 'lte' }],
]);

/** The layouts by message type (a byte), indexed directly: this is looked up for every location message. */
const LAYOUT_BY_TYPE: Array<Layout | undefined> = Array.from({ length: 256 }, (_, type) => LAYOUTS.get(type));

export function isLocationType(type: number): boolean {
  return LAYOUT_BY_TYPE[type] !== undefined;
}

/** Skips one cell-tower block; only its length matters to us (positions carry no network field). */
export function skipLbs(r: ByteReader, kind: Lbs, withLength: boolean): void {
  if (withLength) {
    const length = r.u8();
    if (length === 0) return;
    const start = r.offset;
    readLbsFields(r, kind);
    // The length byte counts itself on older firmwares and not on newer ones; trust it only forward.
    const declaredEnd = start + length - 1;
    if (declaredEnd > r.offset && declaredEnd <= r.end) r.offset = declaredEnd;
    return;
  }
  readLbsFields(r, kind);
}

function readLbsFields(r: ByteReader, kind: Lbs): void {
  const mcc = r.u16();
  if (mcc & 0x8000 || kind === 'long') r.u16();
  else r.u8();
  if (kind === 'lte') {
    r.skip(4 + 8);
    return;
  }
  r.u16();
  r.skip(kind === 'long' ? 4 : 3);
}

function readAccEvent(p: Gt06Record, r: ByteReader): void {
  p.attributes.ignition = r.u8() > 0;
  p.attributes.event = r.u8();
  p.attributes.archive = r.u8() > 0;
}

/** 0x37 appends one tagged module after the ACC/event bytes. */
function readModule37(p: Gt06Record, r: ByteReader): void {
  if (r.remaining < 3) return;
  const module = r.u16();
  const length = r.u8();
  if (module === 0x0027 && length >= 2) p.attributes.power = r.u16() / 100;
  else if (module === 0x002e && length >= 4) p.attributes.odometer = r.u32();
  else r.skip(Math.min(length, r.remaining));
}

/** Bytes some models put before the fix: their IMEI (QH302R), or a marker, IMEI and event time (NT20, XT40). */
function prefixBytes(msg: Gt06Message): number {
  if (msg.model === 'QH302R' && msg.type === 0x12) return 8;
  if (isNt20Family(msg)) return 1 + 8 + 6;
  return 0;
}

function isNt20Family(msg: Gt06Message): boolean {
  return (msg.model === 'NT20' || msg.model === 'XT40') && (msg.type === 0x22 || msg.type === 0x25);
}

/** GPS / LBS / status messages (0x10-0x37, 0xA0-0xA7): one position (or report) each, acknowledged. */
export function decodeLocation(msg: Gt06Message): Gt06Result {
  const layout = LAYOUT_BY_TYPE[msg.type]!;
  const r = msg.body;
  // SPACE10X sends a multi-cell list as a long 0x19; it has no single position to report.
  if (msg.type === 0x19 && msg.length >= 0x17) return { positions: [], reply: ack(msg) };
  // Wearables reuse 0xA3 for short status frames: too short for a fix, 4G cell and status block.
  if (msg.type === 0xa3 && r.remaining < 18 + 1 + 6) return decodeShortA3(msg);
  r.skip(Math.min(prefixBytes(msg), r.remaining));
  if (layout.gps && r.remaining < 18) {
    // Firmwares that drop the serial and CRC: the fix runs up to the CR LF and nothing follows it.
    const whole = new ByteReader(msg.frame, r.offset, Math.max(r.offset, msg.frame.length - 2));
    return emit(readGps(whole, msg.state)!, ack(msg));
  }
  const p: Gt06Record = layout.gps ? readGps(r, msg.state)! : newReport();
  if (layout.statusTail !== undefined) readTail(p, msg, layout.statusTail);
  else {
    if (layout.lbs) skipLbs(r, layout.lbs, layout.lbsLength === true);
    if (layout.accEvent && r.remaining >= 3) readAccEvent(p, r);
    if (msg.type === 0x37) readModule37(p, r);
    if (msg.type === 0x12) decodeGpsLbsExtras(p, r, msg);
    if (msg.type === 0x31 && 'fixTime' in p && r.remaining >= 2) {
      r.offset = r.end - 2; // altitude closes the AZ735 body
      p.altitude = r.i16();
    }
    if (isNt20Family(msg)) readNt20Tail(p, msg);
    if (r.remaining === 4) p.attributes.odometer = r.u32();
  }
  return emit(p, ack(msg));
}

/** The status block closes the body; cell blocks before it vary too much between firmwares to walk. */
function readTail(p: Gt06Record, msg: Gt06Message, statusBytes: number): void {
  const r = msg.body;
  const vl103Driver = msg.model === 'VL103' && msg.type === 0x16 && r.remaining >= statusBytes + 8;
  const tail = r.end - statusBytes - (vl103Driver ? 8 : 0);
  if (tail < r.offset) throw new MalformedFrameError(`gt06: 0x${msg.type.toString(16)} too short for its status block`);
  r.offset = tail;
  if (isVxt01(msg)) {
    readPowerStatus(p, r, true);
    r.u8(); // alarm extension
  } else readStatusBlock(p, r, { model: msg.model });
  if (vl103Driver) {
    r.offset = r.end - 8;
    const tag = r.slice(8);
    if (tag.some((b) => b !== 0)) p.attributes.driverUniqueId = hex(tag);
  }
}

/** NT20 / XT40 close 0x22 and 0x25 with status, supply volts, battery, and engine minutes. */
function readNt20Tail(p: Gt06Record, msg: Gt06Message): void {
  const r = msg.body;
  if (msg.type === 0x25) {
    // An RFID reader's frame (STX, 12 characters, ETX) ends the message when a driver swiped.
    if (r.remaining >= 14 && r.bytes[r.end - 1] === 0x03 && r.bytes[r.end - 14] === 0x02) p.attributes.driverUniqueId = hex(r.bytes.subarray(r.end - 14, r.end));
    r.offset = r.end;
    return;
  }
  r.offset = r.end - 12; // fixed offsets from the end; the reader still bounds every read
  p.attributes.power = r.u16() / 100;
  p.attributes.battery = r.u8() / 10;
  r.offset = r.end - 4;
  const minutes = r.u32();
  // Only NT20 is known to count engine minutes here (reported in ms, as `hours` is everywhere).
  if (msg.model === 'NT20') p.attributes.hours = minutes * 60_000;
}

/** Short 0xA3 frames from wearables: terminal info first, step counter on the longer form. */
function decodeShortA3(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  const p = newReport();
  applyTerminalInfo(p, r.u8());
  if (r.remaining >= 12) {
    r.offset += 8;
    p.attributes.steps = r.u32();
  }
  return emit(p, ack(msg));
}

/** VXT01 sends 0x12/0x16 with length 0x24 and its own meaning of alarm code 7. */
function isVxt01(msg: Gt06Message): boolean {
  return !msg.extended && (msg.type === 0x12 || msg.type === 0x16) && msg.length === 0x24;
}

/** Vendor extensions of 0x12, told apart by their frame length. */
function decodeGpsLbsExtras(p: Gt06Record, r: ByteReader, msg: Gt06Message): void {
  if (msg.extended) return;
  if (msg.length >= 0x71) {
    // GT06E with a card reader: odometer, then the swiped driver licence as text.
    p.attributes.odometer = r.u32();
    const text = r.slice(r.u8());
    p.attributes.driverLicense = Buffer.from(text).toString('latin1').trim();
    return;
  }
  if (msg.length === 0x2b) {
    // S5: status with supply voltage, alarm, oil, temperature, odometer in 10 m.
    readPowerStatus(p, r);
    const alarm = alarmName(r.u8());
    if (alarm) p.attributes.alarm = alarm;
    p.attributes.oil = r.u16();
    const t = r.u8();
    p.attributes.temp1 = t & 0x80 ? -(t & 0x7f) : t;
    p.attributes.odometer = r.u32() * 10;
    return;
  }
  if (msg.length === 0x24) {
    readPowerStatus(p, r);
    r.u8(); // alarm extension
  }
}

function readPowerStatus(p: Gt06Record, r: ByteReader, overspeedVariant = false): void {
  applyTerminalInfo(p, r.u8(), overspeedVariant);
  p.attributes.power = r.u16() / 100;
  applyGsmLevel(p, r.u8());
}
