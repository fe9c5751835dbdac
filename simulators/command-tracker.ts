import { connect, type Socket } from 'node:net';
import type { SimulatedFix } from './teltonika-packets.ts';
import type { ReceivedCommand, TrackerDialect } from './tracker-dialect.ts';

/** A command as the tracker received it, and when. */
export interface Delivered extends ReceivedCommand {
  at: number;
  /** The frame as it arrived. */
  raw: Buffer;
}

export interface CommandTracker {
  /** Sends one fix and resolves once the server acknowledged it. */
  report(fix: Partial<SimulatedFix>): Promise<void>;
  /** The next command not yet taken, waiting up to `timeoutMs`; undefined if none came. */
  nextCommand(timeoutMs?: number): Promise<Delivered | undefined>;
  /** Answers a command with `text`, or with what the simulated device would say. */
  answer(command: ReceivedCommand, text?: string): void;
  /** Commands received and not yet taken. */
  readonly waiting: number;
  /** Whether the connection has closed (the server or the network hung up, or close()). */
  readonly closed: boolean;
  close(): void;
}

/**
 * A tracker of a simulated protocol on a real socket whose every step the test chooses: it logs in,
 * reports the fixes it is given, collects the commands the server writes between acknowledgements,
 * and answers them only when told to (or never, or after it hung up).
 */
export async function commandTracker(port: number, imei: string, dialect: TrackerDialect, options: { localAddress?: string } = {}): Promise<CommandTracker> {
  // localAddress: another loopback address (127.0.0.2), so the tracker is a different client than the server's own.
  const socket: Socket = connect({ port, host: '127.0.0.1', ...options });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.setNoDelay(true);
  let received = Buffer.alloc(0);
  let loggedIn: ((accepted: boolean) => void) | undefined;
  const acks: Array<() => void> = [];
  const commands: Delivered[] = [];
  // Whoever waits for the next command (or for the connection to close): woken, not polled, so a
  // bench can hold hundreds of trackers without spending its CPU on timers.
  let wake: (() => void) | undefined;
  let closed = false;

  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    for (;;) {
      if (loggedIn) {
        const login = dialect.readLoginAnswer(received);
        if (!login) return;
        received = received.subarray(login.consumed);
        if (login.accepted && login.send) {
          socket.write(login.send);
          continue;
        }
        const done = loggedIn;
        loggedIn = undefined;
        done(login.accepted);
        continue;
      }
      const message = dialect.readServerMessage(received);
      if (!message) return;
      const raw = Buffer.from(received.subarray(0, message.consumed));
      received = received.subarray(message.consumed);
      if (message.kind === 'command') {
        commands.push({ ...message.command, at: Date.now(), raw });
        wake?.();
      } else if (message.records > 0) acks.shift()?.();
    }
  });
  socket.on('close', () => {
    closed = true;
    wake?.();
    for (const ack of acks.splice(0)) ack();
  });
  socket.on('error', () => undefined);

  const accepted = await new Promise<boolean>((resolve) => {
    loggedIn = resolve;
    socket.write(dialect.login(imei));
  });
  if (!accepted) throw new Error(`tracker ${imei} was refused`);

  const within = <T>(promise: Promise<T>, timeoutMs: number): Promise<T | undefined> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
  };

  return {
    async report(fix) {
      let acknowledged = false;
      const acked = new Promise<void>((resolve) =>
        acks.push(() => {
          acknowledged = !closed;
          resolve();
        }),
      );
      socket.write(dialect.packet([{ time: new Date(), latitude: 19.43, longitude: -99.13, speedKmh: 0, heading: 90, satellites: 9, ignition: true, ...fix }], imei));
      await within(acked, 10_000);
      if (!acknowledged) throw new Error(`tracker ${imei}: fix not acknowledged`);
    },
    async nextCommand(timeoutMs = 10_000) {
      if (commands.length === 0 && !closed) {
        await within(new Promise<void>((resolve) => (wake = resolve)), timeoutMs);
        wake = undefined;
      }
      return commands.shift();
    },
    answer(command, text) {
      socket.write(dialect.answer(command, text ?? dialect.obey(command, { out1: false, out2: false }).answer, imei));
    },
    get waiting() {
      return commands.length;
    },
    get closed() {
      return closed;
    },
    close: () => socket.destroy(),
  };
}
