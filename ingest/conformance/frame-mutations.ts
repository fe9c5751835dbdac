/**
 * Seeded damage to captured frames, for fuzz tests: the same seed gives the same inputs, so a failure
 * found once is reproduced by running again.
 */
export { seededRandom } from '../../runtime/seeded-random.ts';

// Bytes that mean something in the text protocols: digits, separators, markers.
const TEXT_BYTES = [...'0123456789,.-#*()$+:;|ABFNSEWVXYZ'].map((c) => c.charCodeAt(0));

/**
 * One to four edits: bit flips, truncation, random or meaningful bytes inserted or overwritten, runs
 * deleted or zeroed, a length byte near the start rewritten. Binary and text protocols alike.
 */
export function mutate(input: Uint8Array, random: () => number): Uint8Array {
  let bytes = [...input];
  const pick = (n: number): number => Math.floor(random() * n);
  const edits = 1 + pick(4);
  for (let e = 0; e < edits; e++) {
    const at = pick(bytes.length + 1);
    switch (pick(8)) {
      case 0:
        if (at < bytes.length) bytes[at] = bytes[at]! ^ (1 << pick(8));
        break;
      case 1:
        bytes = bytes.slice(0, at);
        break;
      case 2:
        bytes.splice(at, 0, pick(256));
        break;
      case 3:
        bytes.splice(at, 1 + pick(4));
        break;
      case 4:
        bytes.splice(at, 0, TEXT_BYTES[pick(TEXT_BYTES.length)]!);
        break;
      case 5:
        if (at < bytes.length) bytes[at] = TEXT_BYTES[pick(TEXT_BYTES.length)]!;
        break;
      case 6:
        // Length fields sit near the start of binary frames: decoders must not trust them.
        if (bytes.length > 2) bytes[pick(Math.min(8, bytes.length))] = pick(256);
        break;
      default:
        for (let i = at; i < Math.min(bytes.length, at + 1 + pick(8)); i++) bytes[i] = 0;
    }
  }
  return Uint8Array.from(bytes);
}
