import type { FrameResult } from '../../protocol.ts';

function isStart(buffer: Uint8Array, at: number): boolean {
  const b = buffer[at];
  return (b === 0x78 || b === 0x79) && buffer[at + 1] === b;
}

function endsWithCrLf(buffer: Uint8Array, end: number): boolean {
  return buffer[end - 2] === 0x0d && buffer[end - 1] === 0x0a;
}

/** Offset just past the first CR LF after the header, or -1 while none has arrived. */
function scanCrLf(buffer: Uint8Array, from: number, limit: number): number {
  for (let i = from; i + 1 < limit; i++) if (buffer[i] === 0x0d && buffer[i + 1] === 0x0a) return i + 2;
  return -1;
}

/**
 * Cuts one GT06 frame: 0x7878 + 1-byte length or 0x7979 + 2-byte length, then the length's worth of
 * bytes (type .. CRC) and CR LF. Some Concox firmwares send WiFi/LBS messages (0x69, 0x17) with a
 * length byte that does not match the body, so when the declared end is not CR LF we fall back to
 * the first CR LF, as the devices' own servers do.
 */
export function nextGt06Frame(buffer: Uint8Array): FrameResult {
  if (buffer.length < 2) return buffer.length === 0 || buffer[0] === 0x78 || buffer[0] === 0x79 ? { kind: 'incomplete' } : { kind: 'skip', consumed: 1 };
  if (!isStart(buffer, 0)) {
    // Line noise before a frame: drop everything up to the next possible start marker.
    let next = 1;
    while (next < buffer.length && !(buffer[next] === 0x78 || buffer[next] === 0x79)) next++;
    return { kind: 'skip', consumed: next };
  }
  const extended = buffer[0] === 0x79;
  const headerBytes = extended ? 4 : 3;
  if (buffer.length < headerBytes) return { kind: 'incomplete' };
  const declared = extended ? (buffer[2]! << 8) | buffer[3]! : buffer[2]!;
  const total = headerBytes + declared + 2;
  if (buffer.length < total) {
    // A frame shorter than it declares (seen on real logins) is accepted when it ends the data
    // received so far with CR LF; a long frame still arriving rarely stops exactly there. Only such
    // a buffer is scanned, so a long frame arriving in small chunks is not rescanned for each one.
    const end = endsWithCrLf(buffer, buffer.length) ? scanCrLf(buffer, headerBytes, buffer.length) : -1;
    return end === buffer.length ? { kind: 'frame', frame: buffer.subarray(0, end), consumed: end } : { kind: 'incomplete', frameBytes: total };
  }
  if (endsWithCrLf(buffer, total)) return { kind: 'frame', frame: buffer.subarray(0, total), consumed: total };
  const end = scanCrLf(buffer, headerBytes, buffer.length);
  if (end > 0) return { kind: 'frame', frame: buffer.subarray(0, end), consumed: end };
  return { kind: 'incomplete' };
}
