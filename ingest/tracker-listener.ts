import { createServer, type Server, type Socket } from 'node:net';
import { listenAndStayUp } from '../runtime/listening-server.ts';
import { serveProxiedConnection, type ProxyProtocolOptions } from './proxied-connection.ts';
import { serveTrackerConnection, type ConnectionDeps } from './tracker-connection.ts';

export interface TrackerListener {
  protocol: string;
  port: number;
  close(): Promise<void>;
}

export interface TrackerListenOptions {
  host: string;
  port: number;
  /** The variable that moves this port, named when it is taken. */
  portVariable: string;
  /** Connections held at once; past it new ones are closed at once (and counted). */
  maxConnections: number;
  /** Every connection opens with a PROXY protocol header naming the tracker (TRACKER_PROXY_PROTOCOL); absent, none does. */
  proxyProtocol?: ProxyProtocolOptions;
}

/** One TCP port for one protocol. */
export async function listenForTrackers(options: TrackerListenOptions, deps: ConnectionDeps): Promise<TrackerListener> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    if (options.proxyProtocol) serveProxiedConnection(socket, options.proxyProtocol, deps);
    else serveTrackerConnection(socket, deps);
  });
  const port = await listenAndStayUp(server, {
    host: options.host,
    port: options.port,
    name: `${deps.protocol.name} trackers`,
    portVariable: options.portVariable,
    maxConnections: options.maxConnections,
    log: deps.log,
    onDrop: () => deps.counters.connectionsRefused++,
  });
  return {
    protocol: deps.protocol.name,
    port,
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
