/**
 * JT/T 808's byte stuffing and checksum. A frame is 0x7e, the message, its XOR checksum, 0x7e; inside,
 * 0x7e travels as 0x7d 0x02 and 0x7d as 0x7d 0x01, so 0x7e only ever marks a frame's ends.
 */

const FLAG = 0x7e;
const ESCAPE = 0x7d;

/** XOR of bytes[start..end): the checksum of header and body. */
export function xorChecksum(bytes: Uint8Array, start: number, end: number): number {
  let x = 0;
  for (let i = start; i < end; i++) x ^= bytes[i]!;
  return x;
}

/** Whether an unescaped frame `7e … checksum 7e` carries the checksum of what it holds. */
export function checksumMatches(frame: Uint8Array): boolean {
  return frame.length >= 3 && xorChecksum(frame, 1, frame.length - 2) === frame[frame.length - 2];
}

/**
 * The frame with its escapes undone. 0x7d followed by anything but 01 or 02 is kept as sent: it is no
 * escape, and dropping it would shift every field after it. One tracker in the corpus (terminal
 * 4f07788ef87d) leaves 0x7d unescaped, so its `7d 01` is data: when only the bytes as sent add up to
 * their checksum, they are what the tracker meant.
 */
export function unescapeFrame(raw: Uint8Array): Uint8Array {
  if (raw.indexOf(ESCAPE) < 0) return raw;
  const out = new Uint8Array(raw.length);
  let n = 0;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    const next = raw[i + 1];
    if (b === ESCAPE && (next === 0x01 || next === 0x02)) {
      out[n++] = next === 0x01 ? ESCAPE : FLAG;
      i++;
    } else out[n++] = b;
  }
  const unescaped = out.subarray(0, n);
  if (n !== raw.length && !checksumMatches(unescaped) && checksumMatches(raw)) return raw;
  return unescaped;
}

/** `7e`, the message with 0x7e and 0x7d escaped, `7e`: what goes on the wire. */
export function escapeFrame(message: Uint8Array): Uint8Array {
  const out: number[] = [FLAG];
  for (const b of message) {
    if (b === FLAG) out.push(ESCAPE, 0x02);
    else if (b === ESCAPE) out.push(ESCAPE, 0x01);
    else out.push(b);
  }
  out.push(FLAG);
  return Uint8Array.from(out);
}
