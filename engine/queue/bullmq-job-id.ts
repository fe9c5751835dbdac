/**
 * BullMQ rejects custom job ids that contain ':' or look like integers. This escape is reversible,
 * so two of our ids never map to one BullMQ id and the processor sees the id the caller gave:
 * '%' → '%25', ':' → '%3A', and an integer-looking id gets a '%i' prefix (no escape starts that way).
 */
export function toBullmqId(id: string): string {
  const escaped = id.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'));
  return `${parseInt(escaped, 10)}` === escaped ? `%i${escaped}` : escaped;
}

export function fromBullmqId(id: string): string {
  const unprefixed = id.startsWith('%i') ? id.slice(2) : id;
  return unprefixed.replace(/%(25|3A)/g, (m) => (m === '%25' ? '%' : ':'));
}
