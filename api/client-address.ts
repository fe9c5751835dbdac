import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { plainAddress, TrustedProxies } from './trusted-proxies.ts';

type AddressEnv = { Variables: { clientAddress: string | null } };

/** The address of the socket a request came on; null when it did not come over one (tests calling the app directly). */
function peerAddress(c: Context): string | null {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  const address = env?.incoming?.socket?.remoteAddress;
  return address ? (plainAddress(address) ?? address) : null;
}

/**
 * First on every request: who the client is, for the failed-authentication limit, the audit log and
 * the logs alike. The socket's peer, or, when the peer is a proxy the operator trusts (TRUST_PROXY),
 * the client it names in `X-Forwarded-For`.
 */
export function resolveClientAddress(trusted: TrustedProxies = new TrustedProxies([])) {
  return createMiddleware<AddressEnv>(async (c, next) => {
    const peer = peerAddress(c);
    c.set('clientAddress', peer === null ? null : trusted.clientOf(peer, c.req.header('X-Forwarded-For')));
    await next();
  });
}

/** The client's address as resolved for this request (IPv4 without its `::ffff:` prefix), or null. */
export function clientAddress(c: Context): string | null {
  const resolved = (c as Context<AddressEnv>).get('clientAddress');
  return resolved === undefined ? peerAddress(c) : resolved;
}
