import { crc16Ibm } from '../../codec/crc16.ts';

const CODEC_12 = 0x0c;
const COMMAND = 0x05;

/** A Codec 12 command frame, e.g. `setdigout 1` to cut the engine through output 1. */
export function encodeTeltonikaCommand(command: string): Uint8Array {
  const text = Buffer.from(command, 'latin1');
  const dataLength = 1 + 1 + 1 + 4 + text.length + 1;
  const frame = Buffer.alloc(8 + dataLength + 4);
  frame.writeUInt32BE(dataLength, 4);
  let at = 8;
  frame[at++] = CODEC_12;
  frame[at++] = 1;
  frame[at++] = COMMAND;
  frame.writeUInt32BE(text.length, at);
  at += 4;
  text.copy(frame, at);
  at += text.length;
  frame[at++] = 1;
  frame.writeUInt32BE(crc16Ibm(frame, 8, at), at);
  return frame;
}
