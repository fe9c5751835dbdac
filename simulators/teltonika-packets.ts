import { crc16Ibm } from '../ingest/codec/crc16.ts';

/** What a simulated tracker reports in one record. */
export interface SimulatedFix {
  time: Date;
  latitude: number;
  longitude: number;
  altitude?: number;
  speedKmh: number;
  heading: number;
  satellites: number;
  ignition: boolean;
  /** External supply in volts. */
  power?: number;
  /** The tracker's own backup battery in volts. */
  battery?: number;
  /** Total odometer in metres. */
  odometer?: number;
  /** The iButton key read with this fix (IO 78, eight bytes), as a driver identification reader sends it. */
  iButton?: bigint;
  /** Digital outputs, once a command has set them: out1 drives the engine cut relay, out2 a siren (IO 179, 180). */
  outputs?: { out1: boolean; out2: boolean };
  /** The fuel level in percent (IO 89, CAN fuel level), as a tracker on the vehicle's CAN bus reports it. */
  fuelPercent?: number;
  /** A harsh manoeuvre the tracker's accelerometer saw with this fix (IO 253, green driving type): the record's event. */
  greenDriving?: 'acceleration' | 'braking' | 'cornering';
}

/** The login a Teltonika device sends first: 2-byte length and the IMEI in ASCII. */
export function teltonikaLogin(imei: string): Uint8Array {
  const frame = Buffer.alloc(2 + imei.length);
  frame.writeUInt16BE(imei.length, 0);
  frame.write(imei, 2, 'latin1');
  return frame;
}

/** The radio every simulated Teltonika reports: an LTE model (FMC) on 4G with 4 of 5 signal bars. */
const GSM_LEVEL = 4;
/** IO 253's values: 1 harsh acceleration, 2 harsh braking, 3 harsh cornering. */
const GREEN_DRIVING_TYPES = { acceleration: 1, braking: 2, cornering: 3 } as const;
const NETWORK_TYPE_4G = 2;

/**
 * A Codec 8 AVL packet as an FMC device sends it: ignition (IO 239), movement (240), GSM signal (21),
 * network type (237), power (66), battery (67), odometer (16), the digital outputs (179, 180) when
 * known, the fuel level (89) when given, a harsh manoeuvre (253) and an iButton (78) when the fix has one.
 */
export function teltonikaCodec8(fixes: SimulatedFix[]): Uint8Array {
  const records = fixes.map((f) => {
    const r = Buffer.alloc(8 + 1 + 15 + 2 + 1 + 8 * 2 + 1 + 2 * 3 + 1 + 5 + 1 + 9);
    const oneByte = 4 + (f.outputs ? 2 : 0) + (f.fuelPercent === undefined ? 0 : 1) + (f.greenDriving === undefined ? 0 : 1);
    let at = 0;
    r.writeBigUInt64BE(BigInt(f.time.getTime()), at); at += 8;
    r[at++] = 0; // priority
    r.writeInt32BE(Math.round(f.longitude * 1e7), at); at += 4;
    r.writeInt32BE(Math.round(f.latitude * 1e7), at); at += 4;
    r.writeInt16BE(Math.round(f.altitude ?? 0), at); at += 2;
    r.writeUInt16BE(Math.round(f.heading) % 360, at); at += 2;
    r[at++] = f.satellites;
    r.writeUInt16BE(Math.round(f.speedKmh), at); at += 2;
    r[at++] = f.greenDriving !== undefined ? 253 : f.iButton === undefined ? 0 : 78; // event IO id: a harsh manoeuvre or a key read is the event
    r[at++] = oneByte + 3 + (f.iButton === undefined ? 0 : 1); // IO elements in all
    r[at++] = oneByte; // one-byte values
    r[at++] = 239; r[at++] = f.ignition ? 1 : 0;
    r[at++] = 240; r[at++] = f.speedKmh > 0 ? 1 : 0;
    r[at++] = 21; r[at++] = GSM_LEVEL;
    r[at++] = 237; r[at++] = NETWORK_TYPE_4G;
    if (f.outputs) {
      r[at++] = 179; r[at++] = f.outputs.out1 ? 1 : 0;
      r[at++] = 180; r[at++] = f.outputs.out2 ? 1 : 0;
    }
    if (f.fuelPercent !== undefined) {
      r[at++] = 89; r[at++] = Math.round(f.fuelPercent);
    }
    if (f.greenDriving !== undefined) {
      r[at++] = 253; r[at++] = GREEN_DRIVING_TYPES[f.greenDriving];
    }
    r[at++] = 2; // two-byte values
    r[at++] = 66; r.writeUInt16BE(Math.round((f.power ?? 12.6) * 1000), at); at += 2;
    r[at++] = 67; r.writeUInt16BE(Math.round((f.battery ?? 4.1) * 1000), at); at += 2;
    r[at++] = 1; // four-byte values
    r[at++] = 16; r.writeUInt32BE(Math.round(f.odometer ?? 0), at); at += 4;
    if (f.iButton === undefined) r[at++] = 0; // eight-byte values
    else {
      r[at++] = 1;
      r[at++] = 78; r.writeBigUInt64BE(f.iButton, at); at += 8;
    }
    return r.subarray(0, at);
  });
  const data = Buffer.concat([Buffer.from([0x08, fixes.length]), ...records, Buffer.from([fixes.length])]);
  const packet = Buffer.alloc(8 + data.length + 4);
  packet.writeUInt32BE(data.length, 4);
  data.copy(packet, 8);
  packet.writeUInt32BE(crc16Ibm(data), 8 + data.length);
  return packet;
}

/** A Codec 12 message with one command (type 5) or response (type 6) around its text. */
function codec12(type: number, text: string): Uint8Array {
  const body = Buffer.from(text, 'latin1');
  const data = Buffer.alloc(3 + 4 + body.length + 1);
  data[0] = 0x0c;
  data[1] = 1;
  data[2] = type;
  data.writeUInt32BE(body.length, 3);
  body.copy(data, 7);
  data[7 + body.length] = 1;
  const packet = Buffer.alloc(8 + data.length + 4);
  packet.writeUInt32BE(data.length, 4);
  data.copy(packet, 8);
  packet.writeUInt32BE(crc16Ibm(data), 8 + data.length);
  return packet;
}

/** The device's answer to a command: a Codec 12 response (type 6). */
export function teltonikaResponse(text: string): Uint8Array {
  return codec12(0x06, text);
}

/** What the server sends a Teltonika device: a record-count ACK, or a Codec 12 command. */
export type TeltonikaServerMessage = { consumed: number } & ({ kind: 'ack'; records: number } | { kind: 'command'; text: string });

/**
 * The server message at the start of `received`, or undefined while incomplete. An ACK is four bytes
 * holding a record count, never 0; a command frame starts with a zero preamble, then its length.
 */
export function readTeltonikaServerMessage(received: Uint8Array): TeltonikaServerMessage | undefined {
  if (received.length < 4) return undefined;
  const view = Buffer.from(received.buffer, received.byteOffset, received.length);
  const first = view.readUInt32BE(0);
  if (first !== 0) return { kind: 'ack', consumed: 4, records: first };
  if (received.length < 8) return undefined;
  const length = view.readUInt32BE(4);
  if (received.length < 8 + length + 4) return undefined;
  const size = view.readUInt32BE(11);
  return { kind: 'command', consumed: 8 + length + 4, text: view.subarray(15, 15 + size).toString('latin1') };
}
