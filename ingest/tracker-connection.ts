import type { Socket } from 'node:net';
import type { Logger } from '../runtime/logger.ts';
import type { DeviceRegistry, RegisteredDevice } from './device-registry.ts';
import type { GroupCommitWriter } from './group-commit.ts';
import { MalformedFrameError } from './malformed-frame-error.ts';
import { newSession, type DecodedFrame, type Protocol } from './protocol.ts';
import { storable, storedFix } from './stored-fix.ts';

export interface ConnectionLimits {
  /** A connection silent for this long is closed. */
  idleTimeoutMs: number;
  /** Bytes held for a frame not yet complete; more means a broken or hostile peer. */
  maxBufferedBytes: number;
}

export interface ConnectionDeps {
  protocol: Protocol;
  registry: DeviceRegistry;
  writer: GroupCommitWriter;
  log: Logger;
  limits: ConnectionLimits;
}

/**
 * One tracker connection: frames in order, each answered only after what it carried is committed.
 * Reading pauses while a frame is being stored, which is also the backpressure when the database is
 * slow or down: the tracker's data waits in its own memory, not ours.
 */
export function serveTrackerConnection(socket: Socket, deps: ConnectionDeps): void {
  const { protocol, registry, writer, log } = deps;
  const session = newSession();
  const remote = `${socket.remoteAddress}:${socket.remotePort}`;
  let device: RegisteredDevice | undefined;
  let buffer: Uint8Array = new Uint8Array(0);
  let busy = false;

  const close = (reason: string, fields: Record<string, unknown> = {}) => {
    if (socket.destroyed) return;
    log.info('tracker connection closed', { protocol: protocol.name, remote, imei: device?.imei, reason, ...fields });
    socket.destroy();
  };
  const send = (bytes: Uint8Array | undefined) => {
    if (bytes && bytes.length > 0 && !socket.destroyed) socket.write(bytes);
  };

  async function identify(deviceId: string): Promise<boolean> {
    if (device?.imei === deviceId) return true;
    const found = await registry.find(deviceId);
    if (!found) {
      registry.refused(deviceId, protocol.name, remote);
      send(protocol.rejectLogin);
      socket.end();
      return false;
    }
    device = found;
    return true;
  }

  async function handle(frame: Uint8Array): Promise<void> {
    let decoded: DecodedFrame;
    try {
      decoded = protocol.decode(frame, session);
    } catch (error) {
      if (error instanceof MalformedFrameError) return close('malformed frame', { error: error.message });
      throw error;
    }
    const id = decoded.deviceId ?? session.deviceId;
    if (id !== undefined && !(await identify(id))) return;
    if (!device) return send(decoded.reply);
    const receivedAt = new Date();
    const fixes = decoded.positions.filter(storable).map((p) => storedFix(device!.id, p, receivedAt));
    const reports = (decoded.reports ?? []).map(() => ({ deviceId: device!.id, receivedAt }));
    if (fixes.length > 0 || reports.length > 0) await writer.submit(fixes, reports);
    send(decoded.reply);
  }

  async function pump(): Promise<void> {
    if (busy) return;
    busy = true;
    socket.pause();
    try {
      while (!socket.destroyed && !socket.writableEnded) {
        const next = protocol.nextFrame(buffer);
        if (next.kind === 'incomplete') break;
        if (next.kind === 'invalid') return close('unreadable stream', { error: next.reason });
        buffer = buffer.subarray(next.consumed);
        if (next.kind === 'frame') await handle(next.frame);
      }
    } catch (error) {
      // The batch holding this frame failed: no ACK, so the tracker resends once it reconnects.
      return close('could not store', { error: (error as Error).message });
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
    void pump();
  });
  socket.on('error', () => undefined); // a reset peer ends up in 'close'; nothing to answer
}
