import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may not reach unless WEBHOOK_ALLOW_PRIVATE is set: a URL given by an API
 * user must not become a way into the server's own network (SSRF). Loopback, private, link-local
 * (cloud metadata lives there), carrier-grade NAT, unspecified, multicast, broadcast, documentation
 * and benchmarking ranges, and their IPv6 counterparts; and IPv6 ranges that lead to an IPv4
 * address (local-use NAT64, 6to4, IPv4-compatible).
 */
const refused = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) refused.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) refused.addSubnet(network, prefix, 'ipv6');

/**
 * IPv6 ranges that carry or reach an IPv4 address by translation, refused whole: the IPv4 address
 * inside may be a private one, and a translator or relay on the way would deliver to it.
 */
const translated: Array<[network: string, prefix: number, what: string]> = [
  ['64:ff9b:1::', 48, 'a local-use NAT64 address (64:ff9b:1::/48), translated to IPv4 by a gateway of the local network'],
  ['2002::', 16, 'a 6to4 address (2002::/16), which embeds an IPv4 address'],
  ['::', 96, 'an IPv4-compatible address (::/96), which embeds an IPv4 address'],
];
const translatedRanges = translated.map(([network, prefix, what]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, 'ipv6');
  return { list, what };
});

const MAPPED_IPV4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;
const MAPPED_IPV4_HEX = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `::ffff:7f00:1`), if it is one. */
function mappedIpv4(address: string): string | undefined {
  const dotted = MAPPED_IPV4.exec(address);
  if (dotted) return dotted[1];
  const hex = MAPPED_IPV4_HEX.exec(address);
  if (!hex) return undefined;
  const high = parseInt(hex[1]!, 16);
  const low = parseInt(hex[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** Why an address is refused, or undefined when it is a public one. */
export function refusedAddressReason(address: string): string | undefined {
  const inner = mappedIpv4(address);
  if (inner) return refusedAddressReason(inner) && `${address} is an IPv4-mapped form of a private or reserved address`;
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  // The loopback and unspecified addresses are IPv4-compatible in form only: the general reason says more.
  const carrier = family === 6 && address !== '::' && address !== '::1' ? translatedRanges.find(({ list }) => list.check(address, 'ipv6')) : undefined;
  if (carrier) return `${address} is ${carrier.what}`;
  return refused.check(address, family === 4 ? 'ipv4' : 'ipv6') ? `${address} is a loopback, private, link-local or reserved address` : undefined;
}
