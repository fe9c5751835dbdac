import type { Socket } from 'node:net';
import { cutFrame } from './frame-cutter.ts';
import { ingestMetrics } from './ingest-metrics.ts';
import type { Protocol } from './protocol.ts';

export interface FramePumpOptions {
  protocol: Protocol;
  /** Bytes held for a frame not yet complete; more means a broken or hostile peer. */
  maxBufferedBytes: number;
  /** Handles one whole frame; the next is not read until it settles. */
  handle(frame: Uint8Array): Promise<void>;
  /** A frame could not be handled (`handle` threw): the caller decides how the connection ends. */
  failed(error: unknown): void;
  close(reason: string, fields?: Record<string, unknown>): void;
}

const EMPTY = new Uint8Array(0);

/**
 * Reads a tracker's frames in order, one at a time. Reading pauses while a frame is handled, which is
 * also the backpressure when the database is slow or down: the tracker's data waits in its own memory,
 * not ours. Reading also pauses while the tracker is not reading our replies (the socket's write
 * buffer is full), so a peer that sends and never reads cannot make us hold its answers.
 */
export function pumpFrames(socket: Socket, options: FramePumpOptions): void {
  const { protocol, handle, close } = options;
  const labels = { protocol: protocol.name };
  let buffer: Uint8Array = EMPTY;
  let busy = false;

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
      return options.failed(error);
    } finally {
      busy = false;
      if (!socket.destroyed) socket.resume();
    }
  }

  socket.on('data', (chunk: Buffer) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    if (buffer.length > options.maxBufferedBytes) return close('too many bytes buffered', { bytes: buffer.length });
    pump().catch((error: Error) => close('could not handle frame', { error: error.message }));
  });
}
