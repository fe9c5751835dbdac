import type { FrameResult, Protocol } from './protocol.ts';

/**
 * The protocol's next frame, with its maximum size enforced, for every protocol in this one place: a
 * frame longer than `maxFrameBytes` is refused, as soon as its header declares the size when the
 * framer knows it, and so is a stream that holds more than the maximum without a frame end. The
 * framers only cut frames; this is what keeps a broken or hostile peer from growing a buffer.
 */
export function cutFrame(protocol: Protocol, buffer: Uint8Array): FrameResult {
  const result = protocol.nextFrame(buffer);
  const max = protocol.maxFrameBytes;
  if (result.kind === 'frame' && result.consumed > max) return tooLong(protocol, result.consumed);
  if (result.kind === 'incomplete') {
    if (result.frameBytes !== undefined && result.frameBytes > max) return tooLong(protocol, result.frameBytes);
    if (buffer.length > max) return { kind: 'invalid', reason: `${protocol.name}: ${buffer.length} bytes without a frame end, more than the ${max} allowed` };
  }
  return result;
}

function tooLong(protocol: Protocol, bytes: number): FrameResult {
  return { kind: 'invalid', reason: `${protocol.name}: frame of ${bytes} bytes is longer than the ${protocol.maxFrameBytes} allowed` };
}
