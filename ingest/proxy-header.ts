import { SocketAddress } from 'node:net';

/**
 * The PROXY protocol header a load balancer (HAProxy's `send-proxy` / `send-proxy-v2`) puts before a
 * proxied connection's first byte, naming the client it accepted the connection from. Version 2 is
 * binary, version 1 one line of text; both are read here, as pure functions of bytes.
 */

/** The v2 signature: 12 bytes no other protocol starts with. */
const V2_SIGNATURE = Uint8Array.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/** The v1 line's start, `PROXY `. */
const V1_START = Uint8Array.from([0x50, 0x52, 0x4f, 0x58, 0x59, 0x20]);
/** Signature, version and command, family and transport, length. */
const V2_FIXED_BYTES = 16;
/** The longest v1 line the specification allows, CR LF included. */
const V1_MAX_BYTES = 107;
/** A v2 header (TLVs included) longer than this is refused: HAProxy's own stay far below it. */
export const PROXY_HEADER_MAX_BYTES = 4096;

const COMMAND_LOCAL = 0x0;
const COMMAND_PROXY = 0x1;
const FAMILY_UNSPEC = 0x0;
const FAMILY_INET = 0x1;
const FAMILY_INET6 = 0x2;
const FAMILY_UNIX = 0x3;
const TRANSPORT_STREAM = 0x1;
/** Address block lengths: source and destination addresses, then their ports (none for AF_UNIX). */
const INET_BYTES = 12;
const INET6_BYTES = 36;
const UNIX_BYTES = 216;

/** The client a header names. */
export interface ProxySource {
  address: string;
  port: number;
}

export type ProxyHeaderCut =
  /** Too few bytes yet to tell; nothing is wrong so far. */
  | { kind: 'incomplete' }
  /** Not a PROXY header, or one that breaks the specification or the size limit. */
  | { kind: 'invalid'; reason: string }
  /**
   * A whole header of `consumed` bytes; the tracker's own bytes follow it. `source` is undefined when
   * the header names no client (a LOCAL command such as a health check, an AF_UNSPEC or AF_UNIX
   * block, v1's UNKNOWN): the connection's own peer address then stands.
   */
  | { kind: 'header'; version: 1 | 2; consumed: number; source: ProxySource | undefined };

const INCOMPLETE: ProxyHeaderCut = { kind: 'incomplete' };

/** Whether `bytes` begins like `prefix` as far as both go. */
function startsLike(bytes: Uint8Array, prefix: Uint8Array): boolean {
  const n = Math.min(bytes.length, prefix.length);
  for (let i = 0; i < n; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

/** An address in the form Node gives a socket's (IPv6 compressed, IPv4-mapped as `::ffff:a.b.c.d`), or undefined when it is none. */
function canonicalAddress(text: string, family: 'ipv4' | 'ipv6'): string | undefined {
  try {
    return new SocketAddress({ address: text, family }).address;
  } catch {
    return undefined;
  }
}

/**
 * The PROXY header at the start of `bytes`, if they hold all of it. `maxBytes` bounds a v2 header
 * (a v1 line is bounded by the specification's 107 bytes).
 */
export function cutProxyHeader(bytes: Uint8Array, maxBytes = PROXY_HEADER_MAX_BYTES): ProxyHeaderCut {
  if (bytes.length === 0) return INCOMPLETE;
  if (startsLike(bytes, V2_SIGNATURE)) return bytes.length < V2_SIGNATURE.length ? INCOMPLETE : cutV2(bytes, maxBytes);
  if (startsLike(bytes, V1_START)) return bytes.length < V1_START.length ? INCOMPLETE : cutV1(bytes);
  return { kind: 'invalid', reason: 'no PROXY protocol signature' };
}

function cutV2(bytes: Uint8Array, maxBytes: number): ProxyHeaderCut {
  if (bytes.length < V2_FIXED_BYTES) return INCOMPLETE;
  const version = bytes[12]! >> 4;
  const command = bytes[12]! & 0x0f;
  const family = bytes[13]! >> 4;
  const transport = bytes[13]! & 0x0f;
  const length = (bytes[14]! << 8) | bytes[15]!;
  if (version !== 2) return { kind: 'invalid', reason: `PROXY v2 header with version ${version}` };
  if (command !== COMMAND_LOCAL && command !== COMMAND_PROXY) return { kind: 'invalid', reason: `PROXY v2 header with unknown command ${command}` };
  const consumed = V2_FIXED_BYTES + length;
  if (consumed > maxBytes) return { kind: 'invalid', reason: `PROXY v2 header of ${consumed} bytes, over the limit of ${maxBytes}` };
  const needed = family === FAMILY_INET ? INET_BYTES : family === FAMILY_INET6 ? INET6_BYTES : family === FAMILY_UNIX ? UNIX_BYTES : 0;
  if (family > FAMILY_UNIX) return { kind: 'invalid', reason: `PROXY v2 header with unknown address family ${family}` };
  // A LOCAL header's address block is to be ignored, whatever it holds; a PROXY one must hold its family's.
  if (command === COMMAND_PROXY && length < needed) return { kind: 'invalid', reason: `PROXY v2 address block of ${length} bytes, too short for its family` };
  if (bytes.length < consumed) return INCOMPLETE;
  // The TLVs after the addresses (ALPN, authority, SSL, ...) are skipped: nothing here reads them.
  if (command === COMMAND_LOCAL || family === FAMILY_UNSPEC || family === FAMILY_UNIX) return { kind: 'header', version: 2, consumed, source: undefined };
  if (transport !== TRANSPORT_STREAM) return { kind: 'invalid', reason: `PROXY v2 header for transport ${transport}, not a TCP stream` };
  const view = new DataView(bytes.buffer, bytes.byteOffset + V2_FIXED_BYTES, needed);
  let address: string | undefined;
  let port: number;
  if (family === FAMILY_INET) {
    address = `${view.getUint8(0)}.${view.getUint8(1)}.${view.getUint8(2)}.${view.getUint8(3)}`;
    port = view.getUint16(8);
  } else {
    const groups: string[] = [];
    for (let i = 0; i < 8; i++) groups.push(view.getUint16(i * 2).toString(16));
    address = canonicalAddress(groups.join(':'), 'ipv6');
    port = view.getUint16(32);
  }
  if (address === undefined) return { kind: 'invalid', reason: 'PROXY v2 header with an unreadable source address' };
  return { kind: 'header', version: 2, consumed, source: { address, port } };
}

/** `PROXY TCP4 203.0.113.7 192.0.2.1 40000 5027\r\n`, or `PROXY UNKNOWN ...\r\n`. */
function cutV1(bytes: Uint8Array): ProxyHeaderCut {
  const searched = Math.min(bytes.length, V1_MAX_BYTES);
  let end = -1;
  for (let i = V1_START.length; i < searched - 1; i++) {
    if (bytes[i] === 0x0d && bytes[i + 1] === 0x0a) {
      end = i;
      break;
    }
  }
  if (end === -1) return bytes.length < V1_MAX_BYTES ? INCOMPLETE : { kind: 'invalid', reason: `PROXY v1 line without CR LF in its first ${V1_MAX_BYTES} bytes` };
  const consumed = end + 2;
  const line = Buffer.from(bytes.buffer, bytes.byteOffset, end).toString('latin1');
  const fields = line.split(' ');
  if (fields[1] === 'UNKNOWN') return { kind: 'header', version: 1, consumed, source: undefined };
  const family = fields[1] === 'TCP4' ? 'ipv4' : fields[1] === 'TCP6' ? 'ipv6' : undefined;
  if (family === undefined || fields.length !== 6) return { kind: 'invalid', reason: 'PROXY v1 line is not "PROXY TCP4|TCP6 source destination sourceport destinationport"' };
  const address = canonicalAddress(fields[2]!, family);
  const destination = canonicalAddress(fields[3]!, family);
  const port = portNumber(fields[4]!);
  if (address === undefined || destination === undefined || port === undefined || portNumber(fields[5]!) === undefined) {
    return { kind: 'invalid', reason: `PROXY v1 line with an unreadable ${family === 'ipv4' ? 'TCP4' : 'TCP6'} address or port` };
  }
  return { kind: 'header', version: 1, consumed, source: { address, port } };
}

/** A port as v1 writes it: decimal, no leading zero, at most 65535. */
function portNumber(text: string): number | undefined {
  if (!/^(0|[1-9]\d{0,4})$/.test(text)) return undefined;
  const port = Number(text);
  return port <= 65535 ? port : undefined;
}
