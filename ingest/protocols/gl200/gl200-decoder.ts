import type { AttributeValue, DecodedFrame, DecodedReport, DecoderSession } from '../../protocol.ts';
import { decodeGl200Binary } from './gl200-binary-decoder.ts';
import { gl200FrameForm } from './gl200-binary-framer.ts';
import { readCanData } from './gl200-can.ts';
import { eriAttributes, tailAttributes, typeAttributes } from './gl200-attributes.ts';
import { gl200Radio, infAttributes } from './gl200-info.ts';
import { findFixes } from './gl200-location.ts';
import { parseGl200Message, type Gl200Message } from './gl200-message.ts';

/**
 * Queclink @Track text protocol (GL200/GL300/GL500, GV200/GV300/GV350/GV500/GV600, GB100...):
 * every fix in a message becomes a position; a message without one (GTINF, GTGSM, command
 * acknowledgements, reports sent before the first fix) becomes a report with its attributes.
 */

const latin1 = new TextDecoder('latin1');
const ascii = new TextEncoder();

/** `+ACK:GTHBD` keeps the connection alive; the device wants its counter echoed back. */
function heartbeat(msg: Gl200Message): DecodedFrame {
  const reply = ascii.encode(`+SACK:GTHBD,${msg.version ?? ''},${msg.count}$`);
  return { deviceId: msg.imei, positions: [], reply };
}

/**
 * `+ACK:GT<command>,<version>,<imei>,<name>[,<command's own fields>],<serial number>,<send time>,<count>$`:
 * the answer to our command, which repeats the four hex digits of serial number the command carried.
 */
function acknowledgement(msg: Gl200Message): DecodedFrame {
  const result = [`GT${msg.type}`, ...msg.fields.slice(msg.body + 1, -2)].join(',');
  const serial = msg.fields[msg.fields.length - 3] ?? '';
  const answer = /^[0-9A-Fa-f]{4}$/.test(serial) ? { text: result, serial: parseInt(serial, 16) } : { text: result };
  return { deviceId: msg.imei, positions: [], reports: [{ time: msg.sendTime, attributes: { type: msg.type, result } }], answer };
}

function messageAttributes(msg: Gl200Message, fixes: ReturnType<typeof findFixes>): Record<string, AttributeValue> {
  const a: Record<string, AttributeValue> = { type: msg.type };
  if (msg.kind === 'BUFF') a.archive = true;
  typeAttributes(msg, fixes, a);
  if (msg.type === 'INF') infAttributes(msg, a);
  if (msg.type === 'CAN') {
    // <report type>,<can state>,<mask>: the mask is the third field after the device name.
    readCanData(msg.fields, msg.body + 3, a);
  }
  const last = fixes[fixes.length - 1];
  if (last) {
    const statusAt = tailAttributes(msg, last, a);
    if (msg.type === 'ERI') eriAttributes(msg, statusAt, a);
  }
  return a;
}

export function decodeGl200(frame: Uint8Array, session: DecoderSession): DecodedFrame {
  // Binary reports share the port; the framer has cut them whole, so their header decides.
  if (frame[0] === 0x2b && gl200FrameForm(frame) === 'binary') return decodeGl200Binary(frame, session);
  const msg = parseGl200Message(latin1.decode(frame));
  session.deviceId = msg.imei;
  if (msg.kind === 'ACK') return msg.type === 'HBD' ? heartbeat(msg) : acknowledgement(msg);
  const fixes = findFixes(msg.fields, msg.body);
  // Firmware without a protocol version lays out non-fix reports in ways we cannot tell apart.
  if (fixes.length === 0 && msg.version === undefined) return { deviceId: msg.imei, positions: [] };
  const shared = messageAttributes(msg, fixes);
  const radio = gl200Radio(shared);
  if (fixes.length === 0) {
    const report: DecodedReport = { time: msg.sendTime, ...radio, attributes: shared };
    return { deviceId: msg.imei, positions: [], reports: [report] };
  }
  const positions = fixes.map(({ position }) => ({ ...position, ...radio, attributes: { ...position.attributes, ...shared } }));
  return { deviceId: msg.imei, positions };
}
