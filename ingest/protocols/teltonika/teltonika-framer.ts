import type { FrameResult } from '../../protocol.ts';

const MAX_IMEI_LENGTH = 64;

/**
 * Three frame forms share the stream: a lone 0xFF keep-alive byte; the login, a 2-byte length then
 * the IMEI in ASCII; and AVL packets, 4 zero bytes, a 4-byte data length, the data, a 4-byte CRC.
 */
export function nextTeltonikaFrame(buffer: Uint8Array): FrameResult {
  if (buffer.length === 0) return { kind: 'incomplete' };
  if (buffer[0] === 0xff) return { kind: 'frame', frame: buffer.subarray(0, 1), consumed: 1 };
  if (buffer.length < 2) return { kind: 'incomplete' };
  const head = (buffer[0]! << 8) | buffer[1]!;
  if (head !== 0) {
    if (head > MAX_IMEI_LENGTH) return { kind: 'invalid', reason: `login length ${head} is not an IMEI` };
    const total = 2 + head;
    return buffer.length < total ? { kind: 'incomplete' } : { kind: 'frame', frame: buffer.subarray(0, total), consumed: total };
  }
  if (buffer.length < 8) return { kind: 'incomplete' };
  if (buffer[2] !== 0 || buffer[3] !== 0) return { kind: 'invalid', reason: 'AVL packet preamble is not four zero bytes' };
  const dataLength = ((buffer[4]! << 24) >>> 0) + (buffer[5]! << 16) + (buffer[6]! << 8) + buffer[7]!;
  const total = 8 + dataLength + 4;
  if (dataLength === 0) return { kind: 'invalid', reason: 'AVL data length 0' };
  return buffer.length < total ? { kind: 'incomplete', frameBytes: total } : { kind: 'frame', frame: buffer.subarray(0, total), consumed: total };
}
