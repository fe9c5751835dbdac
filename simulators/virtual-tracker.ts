import { connect, type Socket } from 'node:net';
import type { Drive } from './drive.ts';
import type { SimulatedFix } from './teltonika-packets.ts';
import type { Outputs } from './obeyed-commands.ts';
import type { ReceivedCommand, TrackerDialect } from './tracker-dialect.ts';

export interface TrackerStats {
  generated: number;
  acknowledged: number;
  /** Packet sent → ACK received, in ms. */
  ackLatencies: number[];
  reconnects: number;
  refused: boolean;
  /** Commands received from the server, each answered. */
  commands: number;
}

const MAX_BUFFERED_FIXES = 10_000;
/** Packets between two status reports (radio, battery): every 5 minutes at the demo's 5 s. */
const STATUS_EVERY_PACKETS = 60;

/**
 * One simulated tracker over real TCP: it reports every interval, keeps what the server has not
 * acknowledged (also while disconnected, like a real device's memory) and sends it again, oldest
 * first, until it is acknowledged. It obeys the server's commands as the real device does and answers
 * them: a cut engine relay (out1) brings the vehicle to a stop until the relay is restored.
 */
export class VirtualTracker {
  readonly stats: TrackerStats = { generated: 0, acknowledged: 0, ackLatencies: [], reconnects: 0, refused: false, commands: 0 };
  /** Unknown until a command sets them; from then on every fix reports them. */
  private outputs: Outputs | undefined;
  private outbox: SimulatedFix[] = [];
  private inFlight = 0;
  private sentAt = 0;
  private socket: Socket | undefined;
  private state: 'idle' | 'login' | 'ready' = 'idle';
  private received: Uint8Array = new Uint8Array(0);
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastFixAt = 0;
  /** Packets sent since the last status report; a login makes one due. */
  private packetsSinceStatus = Number.POSITIVE_INFINITY;

  constructor(
    readonly imei: string,
    private readonly dialect: TrackerDialect,
    private readonly drive: Drive,
    private readonly server: { host: string; port: number },
    private readonly intervalMs: number,
    /** Fixes recorded before an upload, as trackers are configured to save airtime (1: each fix at once). */
    private readonly recordsPerUpload = 1,
  ) {}

  start(): void {
    if (this.stopped) return;
    this.connect();
    this.timer = setInterval(() => this.report(), this.intervalMs * this.recordsPerUpload);
  }

  get pending(): number {
    return this.outbox.length;
  }

  /** Records the fixes of one upload period, one per interval, and uploads them together. */
  private report(): void {
    const now = Date.now();
    const step = this.dialect.timeResolutionMs;
    for (let i = this.recordsPerUpload - 1; i >= 0; i--) {
      // A late timer must not stamp two fixes with the same time at the protocol's resolution (GT06: 1 s).
      const at = Math.max(Math.floor((now - i * this.intervalMs) / step) * step, this.lastFixAt + step);
      this.lastFixAt = at;
      const fix = this.drive.advance(new Date(at), this.intervalMs / 1000, this.outputs?.out1 ?? false);
      this.outbox.push(this.outputs ? { ...fix, outputs: this.outputs } : fix);
      this.stats.generated++;
    }
    // A full memory drops the oldest fixes, as trackers do.
    if (this.outbox.length > MAX_BUFFERED_FIXES) this.outbox.splice(0, this.outbox.length - MAX_BUFFERED_FIXES);
    this.send();
  }

  private connect(): void {
    if (this.stopped || this.stats.refused) return;
    const socket = connect(this.server.port, this.server.host);
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('connect', () => {
      this.state = 'login';
      socket.write(this.dialect.login(this.imei));
    });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.state = 'idle';
      this.inFlight = 0; // unacknowledged records stay in the outbox and go again
      this.received = new Uint8Array(0);
      if (this.stopped || this.stats.refused) return;
      this.stats.reconnects++;
      setTimeout(() => this.connect(), 200 + Math.random() * 300).unref();
    });
  }

  private onData(chunk: Buffer): void {
    this.received = this.received.length === 0 ? chunk : Buffer.concat([this.received, chunk]);
    for (;;) {
      if (this.state === 'login') {
        const answer = this.dialect.readLoginAnswer(this.received);
        if (!answer) return;
        this.received = this.received.subarray(answer.consumed);
        if (!answer.accepted) {
          this.stats.refused = true;
          this.socket?.destroy();
          return;
        }
        if (answer.send) {
          this.socket?.write(answer.send);
          continue;
        }
        this.state = 'ready';
        this.packetsSinceStatus = Number.POSITIVE_INFINITY;
        this.send();
      } else if (this.state === 'ready') {
        const message = this.dialect.readServerMessage(this.received);
        if (!message) return;
        this.received = this.received.subarray(message.consumed);
        if (message.kind === 'command') this.obey(message.command);
        else if (this.inFlight > 0 && message.records > 0) this.acknowledged(message.records);
      } else {
        return;
      }
    }
  }

  private acknowledged(count: number): void {
    const records = Math.min(count, this.inFlight);
    this.outbox.splice(0, records);
    this.stats.acknowledged += records;
    this.stats.ackLatencies.push(performance.now() - this.sentAt);
    this.inFlight = 0;
    this.send();
  }

  private obey(command: ReceivedCommand): void {
    const obeyed = this.dialect.obey(command, this.outputs ?? { out1: false, out2: false });
    this.outputs = obeyed.outputs;
    this.stats.commands++;
    this.socket?.write(this.dialect.answer(command, obeyed.answer, this.imei));
  }

  private send(): void {
    if (this.state !== 'ready' || this.inFlight > 0 || this.outbox.length === 0 || !this.socket) return;
    const batch = this.outbox.slice(0, this.dialect.maxRecordsPerPacket);
    this.inFlight = batch.length;
    this.sentAt = performance.now();
    if (this.dialect.status && this.packetsSinceStatus >= STATUS_EVERY_PACKETS) {
      this.socket.write(this.dialect.status(batch[batch.length - 1]!, this.imei));
      this.packetsSinceStatus = 0;
    }
    this.packetsSinceStatus++;
    this.socket.write(this.dialect.packet(batch, this.imei));
  }

  /** Stops reporting; waits up to `graceMs` for what is buffered to be acknowledged, then hangs up. */
  async stop(graceMs = 5_000): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (!this.socket) {
      this.stopped = true;
      return;
    }
    const deadline = Date.now() + graceMs;
    while (this.outbox.length > 0 && !this.stats.refused && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    this.stopped = true;
    this.socket?.destroy();
  }
}
