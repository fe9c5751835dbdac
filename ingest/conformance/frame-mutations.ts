/** Seeded mutations of real frames for fuzz tests: the same seed gives the same frames on every run. */

export { seededRandom } from '../../simulators/seeded-random.ts';


/** One mutation: flip bits, overwrite, truncate, insert, duplicate a slice, or zero a run. */
export function mutate(frame: Uint8Array, random: () => number): Uint8Array {
  const bytes = Buffer.from(frame);
  const at = Math.floor(random() * Math.max(1, bytes.length));
  switch (Math.floor(random() * 6)) {
    case 0:
      if (bytes.length > 0) bytes[at] = bytes[at]! ^ (1 << Math.floor(random() * 8));
      return bytes;
    case 1:
      if (bytes.length > 0) bytes[at] = Math.floor(random() * 256);
      return bytes;
    case 2:
      return bytes.subarray(0, at);
    case 3:
      return Buffer.concat([bytes.subarray(0, at), Buffer.from([Math.floor(random() * 256)]), bytes.subarray(at)]);
    case 4: {
      const length = Math.floor(random() * 16);
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at, at + length), bytes.subarray(at)]);
    }
    default:
      bytes.fill(0, at, Math.min(bytes.length, at + Math.floor(random() * 8)));
      return bytes;
  }
}
