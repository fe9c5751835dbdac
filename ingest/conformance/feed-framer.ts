import { expect } from 'vitest';
import { cutFrame } from '../frame-cutter.ts';
import type { Protocol } from '../protocol.ts';

/**
 * Feeds chunks to a protocol's framer as a connection would (through cutFrame, with its size limit),
 * and returns the frames it cut (rendered by `render`) and how many bytes are left over. An `invalid`
 * answer throws; every step must make progress.
 */
export function feedFramer(
  protocol: Protocol,
  chunks: Uint8Array[],
  render: (frame: Uint8Array) => string = (f) => Buffer.from(f).toString('hex'),
): { frames: string[]; rest: number } {
  let buffer: Uint8Array = new Uint8Array(0);
  const frames: string[] = [];
  for (const chunk of chunks) {
    buffer = Uint8Array.from(Buffer.concat([buffer, chunk]));
    for (;;) {
      const r = cutFrame(protocol, buffer);
      if (r.kind === 'incomplete') break;
      if (r.kind === 'invalid') throw new Error(r.reason);
      if (r.kind === 'frame') frames.push(render(r.frame));
      expect(r.consumed).toBeGreaterThan(0);
      buffer = buffer.subarray(r.consumed);
    }
  }
  return { frames, rest: buffer.length };
}
