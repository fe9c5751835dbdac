/**
 * Seeded random damage to captured frames, for fuzz tests: the same seed gives the same inputs, so
 * a failure found once is reproduced by rerunning. Used by the H02 and TK103 fuzz tests.
 */

/** mulberry32: tiny, fast and good enough to spread mutations; not for anything secret. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEXT_BYTES = [...'0123456789,.-#*()$ABNSEWVXYZ'].map((c) => c.charCodeAt(0));

/** One to four edits: byte flips, truncation, insertion, deletion, and digit or separator swaps. */
export function mutate(input: Uint8Array, random: () => number): Uint8Array {
  let bytes = [...input];
  const pick = (n: number): number => Math.floor(random() * n);
  const edits = 1 + pick(4);
  for (let e = 0; e < edits; e++) {
    const at = pick(bytes.length + 1);
    switch (pick(6)) {
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
      default:
        if (at < bytes.length) bytes[at] = TEXT_BYTES[pick(TEXT_BYTES.length)]!;
    }
  }
  return Uint8Array.from(bytes);
}
