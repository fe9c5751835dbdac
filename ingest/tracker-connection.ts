import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Logger } from '../runtime/logger.ts';
import type { CommandDelivery, CommandLink } from './commands/command-delivery.ts';
import type { DeviceConnections, TrackerLink } from './device-connections.ts';
import type { DeviceRegistry, RegisteredDevice } from './device-registry.ts';
import type { GroupCommitWriter } from './group-commit.ts';
import type { IngestCounters } from './ingest-counters.ts';
import { decodedRows } from './decoded-rows.ts';
import { ingestMetrics } from './ingest-metrics.ts';
import { DEVICE_ID } from './device-id.ts';
import { cutFrame } from './frame-cutter.ts';
import { MalformedFrameError } from './malformed-frame-error.ts';
import type { PresenceLog } from './presence-log.ts';
import { newSession, type DecodedFrame, type Protocol } from './protocol.ts';
import { StoreFailedError } from './store-failed-error.ts';
import type { ThrottledNotice } from './throttled-notice.ts';
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
}

const EMPTY = new Uint8Array(0);

class ConnectionClosedError extends Error {
  override name = 'ConnectionClosedError';
}

/**
 * One tracker connection: frames in order, each answered only after what it carried is committed.
 * Reading pauses while a frame is being stored, which is also the backpressure when the database is
 * slow or down: the tracker's data waits in its own memory, not ours. Every way out of a frame that
 * did not commit (the wait list is full, the batch failed, the connection was superseded) closes the
 * connection without an answer, so the tracker keeps the data and sends it again.
 *
 * A stranger gets little: until the connection identifies a registered device it holds one of its
 * address's few unidentified places and has `loginTimeoutMs` to do so. Reading also pauses while the
 * tracker is not reading our replies (the socket's write buffer is full), so a peer that sends and
 * never reads cannot make us hold its answers.
 */
export function serveTrackerConnection(socket: Socket, deps: ConnectionDeps): void {
  const { protocol, registry, connections, writer, log } = deps;
  const remote = `${socket.remoteAddress}:${socket.remotePort}`;
  const remoteAddress = socket.remoteAddress?.replace(/^::ffff:(?=\d+\.)/, '') ?? null;
  // No address: the peer is already gone, and the socket closes on its own.
  const placeOf = socket.remoteAddress;
  if (placeOf !== undefined && !deps.unidentified.take(placeOf)) {
    deps.counters.unidentifiedRefused++;
    deps.notice.warn(`unidentified:${remoteAddress}`, 'tracker connection refused: its address holds too many connections that have not identified', {
      protocol: protocol.name, remote, maxUnidentifiedPerAddress: deps.limits.maxUnidentifiedPerAddress,
    });
    socket.on('error', () => undefined);
    socket.destroy();
    return;
  }
  const session = newSession();
  const gone = new AbortController();
  let device: RegisteredDevice | undefined;
  let commandLink: CommandLink | undefined;
  let buffer: Uint8Array = EMPTY;
  let busy = false;
  let failure: string | undefined;
  let unidentified = placeOf !== undefined;

  const connectionId = randomUUID();
  const labels = { protocol: protocol.name };
  ingestMetrics.connectionsOpened.inc(labels);
  ingestMetrics.connections.inc(labels);
  const presence = (kind: 'online' | 'offline', deviceId: number, reason?: string) =>
    deps.presence[kind]({ deviceId, connectionId, at: new Date(), protocol: protocol.name, remoteAddress, ...(reason ? { reason } : {}) });
  // Told as soon as the connection is done with, not when its socket's 'close' comes: the offline of a
  // connection replaced by a newer one is then told before the newer one's online.
  let offlineTold = false;
  const disconnected = (reason: string) => {
    if (!device || offlineTold) return;
    offlineTold = true;
    presence('offline', device.id, deps.presence.shuttingDown ? 'server shutdown' : reason);
    connections.release(device.id, link);
    if (commandLink) deps.commands?.detach(commandLink, reason);
  };

  const loginTimeoutMs = deps.limits.loginTimeoutMs ?? DEFAULT_LOGIN_TIMEOUT_MS;
  const loginTimer = setTimeout(() => {
    deps.counters.loginTimeouts++;
    close('no device identified within the login timeout', { loginTimeoutS: loginTimeoutMs / 1000 });
  }, loginTimeoutMs);
  /** The connection no longer counts as unidentified: it identified, or it is gone. */
  const identifiedOrGone = () => {
    clearTimeout(loginTimer);
    if (!unidentified) return;
    unidentified = false;
    deps.unidentified.release(placeOf!);
  };

  const close = (reason: string, fields: Record<string, unknown> = {}) => {
    if (socket.destroyed) return;
    log.info('tracker connection closed', { protocol: protocol.name, remote, imei: device?.imei, reason, ...fields });
    disconnected(reason);
    socket.destroy();
  };
  const link: TrackerLink = { close: (reason) => close(reason) };
  const send = (bytes: Uint8Array | undefined): boolean => {
    if (socket.destroyed || socket.writableEnded) return false;
    if (bytes && bytes.length > 0) socket.write(bytes);
    return true;
  };
  /** Resolves once the tracker has read enough of our replies to take more, or the connection is gone. */
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        socket.off('drain', done);
        socket.off('close', done);
        resolve();
      };
      socket.on('drain', done);
      socket.on('close', done);
    });

  async function identify(deviceId: string): Promise<boolean> {
    if (device?.imei === deviceId) return true;
    const found = await registry.find(deviceId);
    // Closed while the lookup ran (login timeout, tracker gone): nothing may claim the device for it.
    if (socket.destroyed) return false;
    if (!found) {
      registry.refused(deviceId, protocol.name, remote);
      send(protocol.rejectLogin);
      socket.end();
      return false;
    }
    if (device) {
      connections.release(device.id, link);
      presence('offline', device.id, `identified as another device (${found.imei})`);
      if (commandLink) deps.commands?.detach(commandLink, `identified as another device (${found.imei})`);
    }
    device = found;
    identifiedOrGone();
    connections.claim(device.id, link);
    presence('online', device.id);
    commandLink = { deviceId: device.id, imei: deviceId, protocol: protocol.name, write: (bytes) => send(bytes) };
    deps.commands?.attach(commandLink);
    return true;
  }

  async function handle(frame: Uint8Array): Promise<void> {
    const started = performance.now();
    let decoded: DecodedFrame;
    try {
      decoded = protocol.decode(frame, session);
    } catch (error) {
      if (error instanceof MalformedFrameError) {
        ingestMetrics.malformedFrames.inc(labels);
        return close('malformed frame', { error: error.message });
      }
      throw error;
    }
    if (decoded.deviceId !== undefined && !DEVICE_ID.test(decoded.deviceId)) {
      // No device can be registered under it: a malformed frame, not a lookup.
      ingestMetrics.malformedFrames.inc(labels);
      return close('malformed frame', { error: `device id of ${decoded.deviceId.length} characters is not one a device can have` });
    }
    ingestMetrics.frames.inc(labels);
    const id = decoded.deviceId ?? session.deviceId;
    if (id !== undefined && !(await identify(id))) return;
    if (!device) {
      send(decoded.reply);
      return;
    }
    const { fixes, reports } = decodedRows(decoded, device, protocol.name, deps);
    if (fixes.length > 0 || reports.length > 0) {
      ingestMetrics.positionsDecoded.inc(labels, fixes.length);
      // The frame is copied (it is small) for a dead letter, rather than holding the socket's read buffer it views.
      await writer.submit({ fixes, reports, protocol: protocol.name, frame: Uint8Array.from(frame) }, gone.signal);
      ingestMetrics.positionsStored.inc(labels, fixes.length);
    }
    if (send(decoded.reply) && decoded.reply) ingestMetrics.ackLatency.observe(labels, (performance.now() - started) / 1000);
    if (commandLink && deps.commands) {
      if (decoded.answer) deps.commands.answered(commandLink, decoded.answer);
      if (fixes.length > 0) deps.commands.fixesStored(commandLink, fixes);
    }
  }

  async function pump(): Promise<void> {
    if (busy) return;
    busy = true;
    socket.pause();
    try {
      for (;;) {
        // The tracker is not reading our replies: read none of its frames until it does.
        if (!socket.destroyed && socket.writableNeedDrain) await drained();
        if (socket.destroyed || socket.writableEnded) break;
        const next = cutFrame(protocol, buffer);
        if (next.kind === 'incomplete') break;
        if (next.kind === 'invalid') {
          ingestMetrics.malformedFrames.inc(labels);
          return close('unreadable stream', { error: next.reason });
        }
        // A fully read chunk is let go: an empty view would keep the socket's read buffer alive between frames.
        buffer = next.consumed < buffer.length ? buffer.subarray(next.consumed) : EMPTY;
        if (next.kind === 'frame') await handle(next.frame);
      }
    } catch (error) {
      // The frame was not committed: no ACK, so the tracker resends (after it reconnects).
      if (error instanceof WaitListFullError) {
        deps.counters.refusedBusy++;
        return close('server busy: commit wait list full', { error: error.message });
      }
      if (error instanceof ConnectionClosedError) return;
      if (error instanceof StoreFailedError) return close('could not store', { error: error.message });
      // A database error while identifying, or a bug: this connection ends, the listener goes on.
      log.warn('tracker frame failed', { protocol: protocol.name, remote, imei: device?.imei, error: (error as Error).stack ?? String(error) });
      return close('could not handle frame', { error: (error as Error).message });
    } finally {
      busy = false;
      if (!socket.destroyed) socket.resume();
    }
  }

  socket.setNoDelay(true);
  socket.setTimeout(deps.limits.idleTimeoutMs, () => close('idle timeout'));
  socket.on('data', (chunk: Buffer) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    if (buffer.length > deps.limits.maxBufferedBytes) return close('too many bytes buffered', { bytes: buffer.length });
    pump().catch((error: Error) => close('could not handle frame', { error: error.message }));
  });
  // A reset peer ends up in 'close'; nothing to answer, but it is why the connection ended.
  socket.on('error', (error: NodeJS.ErrnoException) => (failure ??= `connection error (${error.code ?? error.message})`));
  socket.once('close', () => {
    identifiedOrGone();
    ingestMetrics.connections.dec(labels);
    // What this connection still waits for leaves the commit wait list: nobody is left to acknowledge.
    gone.abort(new ConnectionClosedError('tracker connection closed'));
    disconnected(failure ?? 'closed by the tracker');
  });
}
