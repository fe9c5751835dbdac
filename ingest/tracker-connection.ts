import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Logger } from '../runtime/logger.ts';
import type { CommandDelivery } from './commands/command-delivery.ts';
import { ConnectionClosedError } from './connection-closed-error.ts';
import type { DeviceConnections } from './device-connections.ts';
import type { DeviceRegistry } from './device-registry.ts';
import { pumpFrames } from './frame-pump.ts';
import type { GroupCommitWriter } from './group-commit.ts';
import { handleTrackerFrame, type TrackerFrameContext } from './handle-tracker-frame.ts';
import type { IngestCounters } from './ingest-counters.ts';
import { ingestMetrics } from './ingest-metrics.ts';
import type { PresenceLog } from './presence-log.ts';
import { newSession, type Protocol } from './protocol.ts';
import { StoreFailedError } from './store-failed-error.ts';
import type { ThrottledNotice } from './throttled-notice.ts';
import { TrackerIdentity } from './tracker-identity.ts';
import type { TrackerMedia } from './tracker-media.ts';
import { DEFAULT_LOGIN_TIMEOUT_MS, type UnidentifiedConnections } from './unidentified-connections.ts';
import { WaitListFullError } from './wait-list-full-error.ts';

export interface ConnectionLimits {
  /** A connection silent for this long is closed. */
  idleTimeoutMs: number;
  /** Bytes held for a frame not yet complete; more means a broken or hostile peer. */
  maxBufferedBytes: number;
  /** A connection that has not identified a registered device this long after it opened is closed (default 30 s). */
  loginTimeoutMs?: number;
  /** Connections one address may hold that have not identified yet, over every tracker port (default 64). */
  maxUnidentifiedPerAddress?: number;
}

export interface ConnectionDeps {
  protocol: Protocol;
  registry: DeviceRegistry;
  connections: DeviceConnections;
  writer: GroupCommitWriter;
  /** Where `device.online` / `device.offline` go. */
  presence: PresenceLog;
  counters: IngestCounters;
  /** Once-per-device-per-hour warnings about data that could not be kept as sent. */
  notice: ThrottledNotice;
  log: Logger;
  limits: ConnectionLimits;
  /** Unidentified connections per address, shared by every tracker listener. */
  unidentified: UnidentifiedConnections;
  /** Gives identified devices their commands; absent, none are sent. */
  commands?: CommandDelivery;
  /** Where the pictures trackers send are kept (and how large they may be); absent, they are not. */
  media?: TrackerMedia;
}

/** Who the connection is from: the socket's peer, or the client a proxy's PROXY header named. */
export interface TrackerPeer {
  /** Undefined when the peer is already gone. */
  address: string | undefined;
  port: number | undefined;
  /** `address:port` of the proxy the connection came through, for the logs; absent, it came directly. */
  via?: string;
}

/** The socket's own peer: a tracker that connected directly. */
export function socketPeer(socket: Socket): TrackerPeer {
  return { address: socket.remoteAddress, port: socket.remotePort };
}

/**
 * One tracker connection: frames in order (frame-pump.ts), each answered only after what it carried
 * is committed (handle-tracker-frame.ts), on behalf of the device it identified as
 * (tracker-identity.ts). Every way out of a frame that did not commit (the wait list is full, the
 * batch failed, the connection was superseded) closes the connection without an answer, so the
 * tracker keeps the data and sends it again.
 *
 * A stranger gets little: until the connection identifies a registered device it holds one of its
 * address's few unidentified places and has `loginTimeoutMs` to do so.
 */
export function serveTrackerConnection(socket: Socket, deps: ConnectionDeps, peer: TrackerPeer = socketPeer(socket)): void {
  const { protocol, log } = deps;
  const remote = `${peer.address}:${peer.port}`;
  const remoteAddress = peer.address?.replace(/^::ffff:(?=\d+\.)/, '') ?? null;
  const via = peer.via === undefined ? {} : { via: peer.via };
  // No address: the peer is already gone, and the socket closes on its own.
  const place = peer.address;
  if (place !== undefined && !deps.unidentified.take(place)) {
    deps.counters.unidentifiedRefused++;
    deps.notice.warn(`unidentified:${remoteAddress}`, 'tracker connection refused: its address holds too many connections that have not identified', {
      protocol: protocol.name, remote, ...via, maxUnidentifiedPerAddress: deps.limits.maxUnidentifiedPerAddress,
    });
    socket.on('error', () => undefined);
    socket.destroy();
    return;
  }
  const gone = new AbortController();
  let failure: string | undefined;

  const labels = { protocol: protocol.name };
  ingestMetrics.connectionsOpened.inc(labels);
  ingestMetrics.connections.inc(labels);

  const close = (reason: string, fields: Record<string, unknown> = {}) => {
    if (socket.destroyed) return;
    log.info('tracker connection closed', { protocol: protocol.name, remote, ...via, imei: identity.device?.imei, reason, ...fields });
    identity.disconnected(reason);
    socket.destroy();
  };
  const send = (bytes: Uint8Array | undefined): boolean => {
    if (socket.destroyed || socket.writableEnded) return false;
    if (bytes && bytes.length > 0) socket.write(bytes);
    return true;
  };
  const { registry, connections, presence, counters, unidentified, commands, writer, notice } = deps;
  const session = newSession();
  if (deps.media) session.mediaMaxBytes = deps.media.maxBytes;
  const identity = new TrackerIdentity(
    { protocol, registry, connections, presence, counters, unidentified, commands, loginTimeoutMs: deps.limits.loginTimeoutMs ?? DEFAULT_LOGIN_TIMEOUT_MS },
    { id: randomUUID(), remote, remoteAddress, place, said: session.options, send, end: () => socket.end(), isClosed: () => socket.destroyed, close },
  );
  const connection: TrackerFrameContext = { protocol, labels, session, identity, writer, counters, notice, commands, media: deps.media, gone: gone.signal, send, close };

  /** The frame was not committed: no ACK, so the tracker resends (after it reconnects). */
  const frameFailed = (error: unknown) => {
    if (error instanceof WaitListFullError) {
      deps.counters.refusedBusy++;
      return close('server busy: commit wait list full', { error: error.message });
    }
    if (error instanceof ConnectionClosedError) return;
    if (error instanceof StoreFailedError) return close('could not store', { error: error.message });
    // A database error while identifying, or a bug: this connection ends, the listener goes on.
    log.warn('tracker frame failed', { protocol: protocol.name, remote, ...via, imei: identity.device?.imei, error: (error as Error).stack ?? String(error) });
    return close('could not handle frame', { error: (error as Error).message });
  };

  socket.setNoDelay(true);
  socket.setTimeout(deps.limits.idleTimeoutMs, () => close('idle timeout'));
  pumpFrames(socket, {
    protocol, maxBufferedBytes: deps.limits.maxBufferedBytes, handle: (frame) => handleTrackerFrame(frame, connection), failed: frameFailed, close,
  });
  // A reset peer ends up in 'close'; nothing to answer, but it is why the connection ended.
  socket.on('error', (error: NodeJS.ErrnoException) => (failure ??= `connection error (${error.code ?? error.message})`));
  socket.once('close', () => {
    identity.identifiedOrGone();
    ingestMetrics.connections.dec(labels);
    // What this connection still waits for leaves the commit wait list: nobody is left to acknowledge.
    gone.abort(new ConnectionClosedError('tracker connection closed'));
    identity.disconnected(failure ?? 'closed by the tracker');
  });
}
