import { newReport, readDateTime, readGps } from './gt06-fix.ts';
import { skipLbs } from './gt06-location.ts';
import { ack, emit, type Gt06Message, type Gt06Result } from './gt06-message.ts';
import { hex } from './gt06-text.ts';

/** Multi-cell (and cell + WiFi) reports; the 0xA1/0xA2/0x33 forms use 4G-sized cell ids. */
const LTE_CELLS = new Set([0xa1, 0xa2, 0x33]);
const WITH_WIFI = new Set([0x18, 0x2c, 0xa2, 0x33]);
const WITH_LANGUAGE = new Set([0x28, 0x2e, 0xa1]);

export const CELL_TYPES = new Set([0x18, 0x24, 0x28, 0x2c, 0x2e, 0xa1, 0xa2, 0x33]);

/**
 * 0x18/0x24/0x28/0x2C/0x2E/0xA1/0xA2/0x33: time, up to 7 neighbour cells, timing advance, maybe
 * WiFi. We keep the time and the access points; positions carry no cell list.
 */
export function decodeCells(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  const lte = LTE_CELLS.has(msg.type);
  const cellBytes = lte ? 4 + 8 + 1 : 2 + 3 + 1;
  // WANWAY S20 sends 0x24 with length 0x31: timing advance first and a counted cell list.
  const s20 = msg.type === 0x24 && msg.length === 0x31 && !msg.extended;
  // Some firmwares send a GPS fix under these types (0xA2, 0x24); it is too short for the cell list.
  if (!s20 && r.remaining < 6 + 3 + 6 * cellBytes) return decodeGpsForm(msg);
  const p = newReport(readDateTime(r, msg.state));
  if (s20) r.u8();
  const mcc = r.u16();
  if (mcc & 0x8000) r.u16();
  else r.u8();
  const cells = s20 ? r.u8() : msg.type === 0x33 ? 6 : 7;
  r.skip(cells * cellBytes);
  if (!s20) r.u8(); // timing advance
  if (WITH_WIFI.has(msg.type) && r.remaining > 0) {
    const macs: string[] = [];
    const count = r.u8();
    for (let i = 0; i < count; i++) {
      macs.push(hex(r.slice(6)));
      r.u8(); // signal strength
    }
    if (macs.length > 0) p.attributes.wifi = macs.join(',');
  }
  if (WITH_LANGUAGE.has(msg.type) && r.remaining >= 2) r.u16();
  return emit(p, ack(msg));
}

function decodeGpsForm(msg: Gt06Message): Gt06Result {
  const p = readGps(msg.body, msg.state)!;
  return emit(p, ack(msg));
}

/** 0x17 with a consistent length (newer firmwares): fix, cell, then the driver's 8-byte tag. */
export function decodeGpsDriver(msg: Gt06Message): Gt06Result {
  const r = msg.body;
  const p = readGps(r, msg.state)!;
  skipLbs(r, 'short', false);
  if (r.remaining >= 8) {
    const tag = r.slice(8);
    if (tag.some((b) => b !== 0)) p.attributes.driverUniqueId = hex(tag);
  }
  return emit(p, ack(msg));
}
