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
  /** Total odometer in metres. */
  odometer?: number;
  /** The iButton key read with this fix (IO 78, eight bytes), as a driver identification reader sends it. */
  iButton?: bigint;
}

/** The login a Teltonika device sends first: 2-byte length and the IMEI in ASCII. */
export function teltonikaLogin(imei: string): Uint8Array {
  const frame = Buffer.alloc(2 + imei.length);
  frame.writeUInt16BE(imei.length, 0);
  frame.write(imei, 2, 'latin1');
  return frame;
}

/** A Codec 8 AVL packet as an FMB device sends it: ignition (IO 239), movement (240), power (66), odometer (16), and an iButton (78) when the fix has one. */
export function teltonikaCodec8(fixes: SimulatedFix[]): Uint8Array {
  const records = fixes.map((f) => {
    const r = Buffer.alloc(8 + 1 + 15 + 2 + 1 + 2 * 2 + 1 + 3 + 1 + 5 + 1 + 9);
    let at = 0;
    r.writeBigUInt64BE(BigInt(f.time.getTime()), at); at += 8;
    r[at++] = 0; // priority
    r.writeInt32BE(Math.round(f.longitude * 1e7), at); at += 4;
    r.writeInt32BE(Math.round(f.latitude * 1e7), at); at += 4;
    r.writeInt16BE(Math.round(f.altitude ?? 0), at); at += 2;
    r.writeUInt16BE(Math.round(f.heading) % 360, at); at += 2;
    r[at++] = f.satellites;
    r.writeUInt16BE(Math.round(f.speedKmh), at); at += 2;
    r[at++] = f.iButton === undefined ? 0 : 78; // event IO id: a key read is the event
    r[at++] = f.iButton === undefined ? 4 : 5; // IO elements in all
    r[at++] = 2; // one-byte values
    r[at++] = 239; r[at++] = f.ignition ? 1 : 0;
    r[at++] = 240; r[at++] = f.speedKmh > 0 ? 1 : 0;
    r[at++] = 1; // two-byte values
    r[at++] = 66; r.writeUInt16BE(Math.round((f.power ?? 12.6) * 1000), at); at += 2;
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
