import { BlockList, isIP } from 'node:net';

/** Thrown for a TRUST_PROXY entry that is neither an address nor a CIDR block. */
export class TrustedProxyListError extends Error {
  override name = 'TrustedProxyListError';
}

/** An address as peers and proxies write it: IPv4-mapped IPv6 as plain IPv4, without brackets or a port. */
export function plainAddress(raw: string): string | null {
  let text = raw.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) text = bracketed[1]!;
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(':'));
  text = text.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  return isIP(text) === 0 ? null : text;
}

/**
 * The proxies (TRUST_PROXY: addresses and CIDR blocks, comma-separated) whose `X-Forwarded-For` is
 * believed. Only a peer in this list may say who the client is; anyone else could write the header.
 */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly size: number;

  constructor(entries: readonly string[]) {
    const cleaned = entries.map((e) => e.trim()).filter(Boolean);
    for (const entry of cleaned) {
      const [address, bits, extra] = entry.split('/');
      const family = isIP(address ?? '');
      if (family === 0 || extra !== undefined) throw new TrustedProxyListError(`"${entry}" is not an IP address or CIDR block`);
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (bits === undefined) {
        this.list.addAddress(address!, type);
        continue;
      }
      const prefix = Number(bits);
      if (!/^\d{1,3}$/.test(bits) || prefix > (family === 4 ? 32 : 128)) throw new TrustedProxyListError(`"${entry}" has an invalid prefix length`);
      this.list.addSubnet(address!, prefix, type);
    }
    this.size = cleaned.length;
  }

  trusts(address: string): boolean {
    return this.size > 0 && this.list.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
  }

  /**
   * The client behind a chain of proxies: the peer itself unless it is trusted; otherwise the
   * nearest address in `X-Forwarded-For` (read right to left) that is not a trusted proxy. A
   * malformed entry ends the walk at the proxy that passed it on, which is the last address known.
   */
  clientOf(peer: string, forwardedFor: string | undefined): string {
    if (!forwardedFor || !this.trusts(peer)) return peer;
    let client = peer;
    const hops = forwardedFor.split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = plainAddress(hops[i]!);
      if (hop === null) return client;
      client = hop;
      if (!this.trusts(hop)) return hop;
    }
    return client;
  }
}
