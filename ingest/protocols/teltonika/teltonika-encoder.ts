import { crc16Ibm } from '../../codec/crc16.ts';

const CODEC_12 = 0x0c;
const COMMAND = 0x05;

/**
 * One Codec 12 message from the server: preamble, data length, codec, quantity 1, the message type,
 * its payload's length and bytes, quantity 1 again, and the CRC-16/IBM of the data in four bytes.
 */
export function encodeCodec12(type: number, payload: Uint8Array): Uint8Array {
  const dataLength = 1 + 1 + 1 + 4 + payload.length + 1;
  const frame = Buffer.alloc(8 + dataLength + 4);
  frame.writeUInt32BE(dataLength, 4);
  let at = 8;
  frame[at++] = CODEC_12;
  frame[at++] = 1;
  frame[at++] = type;
  frame.writeUInt32BE(payload.length, at);
  at += 4;
  frame.set(payload, at);
  at += payload.length;
  frame[at++] = 1;
  frame.writeUInt32BE(crc16Ibm(frame, 8, at), at);
  return frame;
}

/** A Codec 12 command frame, e.g. `setdigout 1` to cut the engine through output 1. */
export function encodeTeltonikaCommand(command: string): Uint8Array {
  return encodeCodec12(COMMAND, Buffer.from(command, 'latin1'));
}
