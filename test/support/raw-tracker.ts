import { connect, type Socket } from 'node:net';

export interface RawTracker {
  send(bytes: Uint8Array | string): void;
  /** Exactly `n` bytes of answer, or fewer if the server closed or `timeoutMs` passed. */
  read(n: number, timeoutMs?: number): Promise<Buffer>;
  /** Whether the server closed the connection within `timeoutMs`. */
  closedByServer(timeoutMs?: number): Promise<boolean>;
  readonly closed: boolean;
  end(): void;
}

/**
 * A tracker on a real socket that sends whatever bytes a test gives it and reads what comes back;
 * `localAddress` (another loopback address, 127.0.0.2) makes it a different client than the server's.
 */
export async function rawTracker(port: number, options: { localAddress?: string } = {}): Promise<RawTracker> {
  const socket: Socket = connect({ port, host: '127.0.0.1', ...options });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = Buffer.alloc(0);
  let closed = false;
  socket.on('data', (chunk) => (received = Buffer.concat([received, chunk])));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  const wait = async (done: () => boolean, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  };
  return {
    send: (bytes) => void socket.write(bytes),
    async read(n, timeoutMs = 5_000) {
      await wait(() => received.length >= n || closed, timeoutMs);
      const out = received.subarray(0, n);
      received = received.subarray(n);
      return out;
    },
    async closedByServer(timeoutMs = 5_000) {
      await wait(() => closed, timeoutMs);
      return closed;
    },
    get closed() {
      return closed;
    },
    end: () => socket.destroy(),
  };
}
