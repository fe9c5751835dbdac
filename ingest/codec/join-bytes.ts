/** The pieces one after another in one array of `length` bytes (their total): a file sent in chunks, put back together. */
export function joinBytes(pieces: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}
