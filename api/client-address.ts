import type { Context } from 'hono';

/**
 * The address of the connection a request came on, as the audit trail records it (IPv4 peers without
 * their `::ffff:` prefix). Forwarded headers are not read: any client can write them, so they are
 * only worth trusting behind a proxy the operator names, which this server does not yet take.
 * Null when the request did not come over a socket (tests calling the app directly).
 */
export function clientAddress(c: Context): string | null {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  const address = env?.incoming?.socket?.remoteAddress;
  return address ? address.replace(/^::ffff:(?=\d+\.)/, '') : null;
}
