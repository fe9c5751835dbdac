import { createServer, type Server, type Socket } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
/**
 * Client messages after which the backend answers and a request is complete: Sync and Query end
 * one, Flush asks for output, CopyDone/CopyFail end a COPY. A batch is executed whole, so another
 * connection can never slip in between a Parse and its Execute and clobber the unnamed portal.
 */
const BATCH_END = new Set(['S', 'Q', 'H', 'c', 'f']);
const TERMINATE = 'X';

interface Batch {
  connection: number;
  bytes: Uint8Array;
  send(data: Uint8Array): void;
  done(): void;
}

/**
 * Serves one PGlite to many `pg` clients over a Unix socket. PGlite is a single backend session, so
 * requests run one at a time, and while one connection has a transaction open only its own requests
 * run. (The stock `@electric-sql/pglite-socket` executes message by message and interleaves
 * concurrent extended-protocol requests, which fails with `portal "" does not exist` under load.)
 */
export class PgliteSocketServer {
  private readonly queue: Batch[] = [];
  private running = false;
  /** The connection whose transaction is open; others wait until it ends. */
  private owner: number | undefined;
  private nextId = 1;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly db: PGlite) {}

  async listen(path: string): Promise<void> {
    this.server = createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(path, () => resolve());
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    while (this.running) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  private accept(socket: Socket): void {
    const id = this.nextId++;
    this.sockets.add(socket);
    let buffer: Buffer = Buffer.alloc(0);
    let started = false;
    let pending: Buffer[] = [];
    let inFlight = 0;

    // PGlite hands out chunks of a buffer it reuses; the socket may write them later, so each is copied
    // (without the copy a result over ~200 KB came out corrupted and the client hung).
    const send = (data: Uint8Array) => {
      if (!socket.destroyed) socket.write(Buffer.from(data));
    };
    const submit = (bytes: Buffer) => {
      inFlight++;
      // Pause reading while a batch waits, so one client cannot queue without bound.
      socket.pause();
      this.queue.push({
        connection: id,
        bytes,
        send,
        done: () => {
          if (--inFlight === 0 && !socket.destroyed) socket.resume();
        },
      });
      void this.drain();
    };

    socket.on('data', (chunk: Buffer) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
      for (;;) {
        if (!started) {
          if (buffer.length < 8) return;
          const length = buffer.readInt32BE(0);
          if (length < 8 || length > 10_000) return void socket.destroy();
          if (buffer.length < length) return;
          const code = buffer.readInt32BE(4);
          const message = buffer.subarray(0, length);
          buffer = buffer.subarray(length);
          if (code === SSL_REQUEST || code === GSSENC_REQUEST) send(Buffer.from('N'));
          else if (code === CANCEL_REQUEST) return void socket.destroy();
          else {
            started = true;
            submit(Buffer.from(message));
          }
          continue;
        }
        if (buffer.length < 5) return;
        const type = String.fromCharCode(buffer[0]!);
        const length = buffer.readInt32BE(1);
        if (length < 4 || length > MAX_MESSAGE_BYTES) return void socket.destroy();
        if (buffer.length < length + 1) return;
        const message = buffer.subarray(0, length + 1);
        buffer = buffer.subarray(length + 1);
        if (type === TERMINATE) return void socket.end();
        pending.push(message);
        if (BATCH_END.has(type)) {
          submit(Buffer.concat(pending));
          pending = [];
        }
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.sockets.delete(socket);
      void this.release(id);
    });
  }

  /** Forgets a closed connection's queued work and rolls back a transaction it left open. */
  private async release(connection: number): Promise<void> {
    for (let i = this.queue.length - 1; i >= 0; i--) if (this.queue[i]!.connection === connection) this.queue.splice(i, 1);
    if (this.owner !== connection) return;
    while (this.running) await new Promise((resolve) => setTimeout(resolve, 1));
    if (this.owner === connection) {
      await this.db.exec('ROLLBACK').catch(() => undefined);
      this.owner = undefined;
    }
    void this.drain();
  }

  private next(): Batch | undefined {
    const index = this.owner === undefined ? 0 : this.queue.findIndex((b) => b.connection === this.owner);
    return index < 0 ? undefined : this.queue.splice(index, 1)[0];
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let batch = this.next(); batch; batch = this.next()) {
        try {
          await this.db.runExclusive(() => this.db.execProtocolRawStream(batch!.bytes, { onRawData: batch!.send }));
        } catch {
          // The backend has already written its ErrorResponse to the client; the session goes on.
        }
        this.owner = this.db.isInTransaction() ? batch.connection : undefined;
        batch.done();
      }
    } finally {
      this.running = false;
    }
  }
}
