import type { Server as NetServer, AddressInfo } from 'node:net';
import type { Logger } from './logger.ts';
import { StartupError } from './startup-error.ts';

export interface ListenOptions {
  host: string;
  port: number;
  /** What listens, for logs: `http`, `teltonika tracker`, … */
  name: string;
  /** The variable that moves this port, named when the port is taken. */
  portVariable: string;
  /** Connections accepted at once; more are refused (closed at once) and told to `onDrop`. */
  maxConnections: number;
  log: Logger;
  onDrop?: () => void;
}

const ACCEPT_ERROR_LOG_INTERVAL_MS = 60_000;

/**
 * Listens and keeps listening: a start-up failure (port taken, no permission, unknown address) is one
 * clear StartupError, and once listening the server keeps an 'error' listener for its whole life, so an
 * accept that fails (EMFILE when the process is out of file descriptors, ENFILE, ECONNABORTED) is logged
 * and survived instead of crashing the process: the connection is lost, the listener goes on.
 */
export async function listenAndStayUp(server: NetServer, options: ListenOptions): Promise<number> {
  const { host, port, name, portVariable, log } = options;
  server.maxConnections = options.maxConnections;
  let lastLogged = 0;
  let suppressed = 0;
  const onDrop = options.onDrop;
  server.on('drop', () => {
    onDrop?.();
    const now = Date.now();
    if (now - lastLogged < ACCEPT_ERROR_LOG_INTERVAL_MS) return void suppressed++;
    lastLogged = now;
    log.warn('connection refused: listener at its maximum connections', { listener: name, maxConnections: server.maxConnections, refusedSinceLastLine: suppressed });
    suppressed = 0;
  });
  await new Promise<void>((resolve, reject) => {
    const onStartError = (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(new StartupError(`port ${port} on ${host} is already in use (${name}); set ${portVariable} to a free port`));
      else if (error.code === 'EACCES') reject(new StartupError(`no permission to listen on ${host}:${port} (${name}); set ${portVariable} above 1023`));
      else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') reject(new StartupError(`HOST ${host} is not an address of this machine`));
      else reject(error);
    };
    server.once('error', onStartError);
    server.listen(port, host, () => {
      server.off('error', onStartError);
      resolve();
    });
  });
  let lastErrorLogged = 0;
  server.on('error', (error: NodeJS.ErrnoException) => {
    const now = Date.now();
    if (now - lastErrorLogged < ACCEPT_ERROR_LOG_INTERVAL_MS) return;
    lastErrorLogged = now;
    log.error('listener error; still listening', { listener: name, code: error.code, error: error.message });
  });
  return (server.address() as AddressInfo).port;
}
