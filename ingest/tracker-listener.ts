import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { StartupError } from '../runtime/startup-error.ts';
import { serveTrackerConnection, type ConnectionDeps } from './tracker-connection.ts';

export interface TrackerListener {
  protocol: string;
  port: number;
  close(): Promise<void>;
}

/** One TCP port for one protocol. */
export async function listenForTrackers(host: string, port: number, deps: ConnectionDeps): Promise<TrackerListener> {
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    serveTrackerConnection(socket, deps);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new StartupError(`${deps.protocol.name} port ${port} is already in use; set ${deps.protocol.name.toUpperCase()}_PORT (0 disables it)`)
          : error,
      ),
    );
    server.listen(port, host, () => resolve());
  });
  return {
    protocol: deps.protocol.name,
    port: (server.address() as AddressInfo).port,
    /** Stops accepting, lets batches in flight commit and their ACKs go out, then hangs up. */
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await deps.writer.drain();
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise<void>((resolve) => {
        void closed.then(resolve);
        for (const socket of sockets) socket.end();
        setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, 2_000).unref();
      });
    },
  };
}
