import type { Socket } from 'node:net';
import { cutProxyHeader, PROXY_HEADER_MAX_BYTES } from './proxy-header.ts';
import { serveTrackerConnection, type ConnectionDeps } from './tracker-connection.ts';

/** How long a proxy has to send its header by default: HAProxy sends it as soon as it connects. */
export const DEFAULT_PROXY_HEADER_TIMEOUT_MS = 5_000;

/** The tracker ports sit behind a proxy that opens every connection with a PROXY protocol header. */
export interface ProxyProtocolOptions {
  /** Whether a peer may speak for clients (TRACKER_PROXY_FROM); absent, any peer may. */
  trusts?: (address: string) => boolean;
  /** How long a connection has to send its whole header (default 5 s). */
  headerTimeoutMs?: number;
  /** The longest v2 header accepted (default PROXY_HEADER_MAX_BYTES). */
  maxHeaderBytes?: number;
}

const EMPTY = new Uint8Array(0);
const ignore = () => undefined;

/**
 * A connection from the proxy: its PROXY header is read first, then the connection is served as the
 * client's the header names (its address in the logs, in the per-address limit on unidentified
 * connections and in the presence log), and the bytes that came after the header go to the tracker's
 * decoder. A LOCAL header (a health check) keeps the proxy's own address.
 *
 * With the option on, the header is what says who the tracker is, so a connection that does not open
 * with a valid one within the time and size limits is closed: it did not come through the proxy. One
 * that closes before sending anything is let go quietly (a proxy's plain TCP health check).
 */
export function serveProxiedConnection(socket: Socket, proxy: ProxyProtocolOptions, deps: ConnectionDeps): void {
  const via = `${socket.remoteAddress}:${socket.remotePort}`;
  const notice = (reason: string, fields: Record<string, unknown> = {}) =>
    deps.notice.warn(`proxy-header:${socket.remoteAddress}`, 'tracker connection closed: it did not open with a valid PROXY protocol header', {
      protocol: deps.protocol.name, via, reason, ...fields,
    });
  // Errors before the header are not the tracker's to report; the connection just ends.
  socket.on('error', ignore);
  // No address: the peer is already gone, and the socket closes on its own.
  if (socket.remoteAddress === undefined) return;
  if (proxy.trusts && !proxy.trusts(socket.remoteAddress)) {
    notice('the peer is not a trusted proxy (TRACKER_PROXY_FROM)');
    return void socket.destroy();
  }

  let buffer: Uint8Array = EMPTY;
  const timeoutMs = proxy.headerTimeoutMs ?? DEFAULT_PROXY_HEADER_TIMEOUT_MS;
  const stop = () => {
    clearTimeout(timer);
    socket.off('data', received);
    socket.off('close', closed);
  };
  const refuse = (reason: string) => {
    stop();
    notice(reason, { bytes: buffer.length });
    socket.destroy();
  };
  const timer = setTimeout(() => refuse(`no whole header within ${timeoutMs} ms`), timeoutMs);
  const closed = () => {
    stop();
    if (buffer.length > 0) notice('closed before its header was complete', { bytes: buffer.length });
  };
  function received(chunk: Buffer): void {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    const cut = cutProxyHeader(buffer, proxy.maxHeaderBytes ?? PROXY_HEADER_MAX_BYTES);
    if (cut.kind === 'incomplete') return;
    if (cut.kind === 'invalid') return refuse(cut.reason);
    stop();
    // The tracker's first bytes, if they came with the header, go back to the stream: the frame pump reads them first.
    socket.pause();
    if (cut.consumed < buffer.length) socket.unshift(buffer.subarray(cut.consumed));
    const peer = cut.source ?? { address: socket.remoteAddress, port: socket.remotePort };
    serveTrackerConnection(socket, deps, { ...peer, via });
    socket.resume();
  }
  socket.on('data', received);
  socket.once('close', closed);
}
