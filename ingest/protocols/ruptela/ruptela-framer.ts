import type { FrameResult } from '../../protocol.ts';

/** IMEI (8 bytes) and command id (1 byte): the least a Ruptela packet's length can count. */
const MIN_BODY = 9;

/**
 * Ruptela packets: a 2-byte big-endian length of what follows up to the CRC (IMEI, command id,
 * payload), the body, then a 2-byte CRC16 (Kermit). A length too short to hold an IMEI and a
 * command id cannot start a packet, so the stream is given up.
 */
export function nextRuptelaFrame(buffer: Uint8Array): FrameResult {
  if (buffer.length < 2) return { kind: 'incomplete' };
  const length = (buffer[0]! << 8) | buffer[1]!;
  if (length < MIN_BODY) return { kind: 'invalid', reason: `packet length ${length} cannot hold an IMEI and a command id` };
  const total = 2 + length + 2;
  return buffer.length < total ? { kind: 'incomplete', frameBytes: total } : { kind: 'frame', frame: buffer.subarray(0, total), consumed: total };
}
