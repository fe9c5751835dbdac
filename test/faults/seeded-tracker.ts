import { connect, type Socket } from 'node:net';
import { gt06Dialect, teltonikaDialect, type TrackerDialect } from '../../simulators/tracker-dialect.ts';
import type { FleetVehicle } from './seeded-fleet.ts';

/** How long a tracker waits for an ACK before it gives the connection up and sends again on a new one. */
const ACK_TIMEOUT_MS = 30_000;

/**
 * A tracker over real TCP that reports a fixed timeline at a steady wall-clock pace: fix k is due
 * `k × periodMs` after the start, whatever happens to the connection. Like a real device it keeps
 * every fix the server has not acknowledged (also while disconnected) and sends it again, oldest
 * first, one packet in flight at a time, so a device's fixes reach the server in fix-time order. It
 * records when each fix was acknowledged: what the server promised to have stored.
 */
export class SeededTracker {
  /** Wall-clock time each fix was generated, and acknowledged (undefined: not yet). */
  readonly generatedAt: number[] = [];
  readonly ackedAt: Array<number | undefined>;
  reconnects = 0;
  refused = false;
  private readonly dialect: TrackerDialect;
  private outbox: number[] = [];
  private inFlight: number[] = [];
  private socket: Socket | undefined;
  private state: 'idle' | 'login' | 'ready' = 'idle';
  private received: Uint8Array = new Uint8Array(0);
  private ticker: NodeJS.Timeout | undefined;
  private ackTimer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private stopped = false;

  constructor(
    readonly vehicle: FleetVehicle,
    private readonly server: { host: string; ports: { teltonika: number; gt06: number } },
    private readonly periodMs: number,
    private readonly reconnectMs: number,
  ) {
    this.dialect = vehicle.protocol === 'gt06' ? gt06Dialect : teltonikaDialect;
    this.ackedAt = new Array(vehicle.fixes.length).fill(undefined);
  }

  get imei(): string {
    return this.vehicle.imei;
  }

  get generated(): number {
    return this.generatedAt.length;
  }

  get acknowledged(): number {
    return this.ackedAt.filter((t) => t !== undefined).length;
  }

  /** Every fix of the timeline generated and acknowledged. */
  get done(): boolean {
    return this.generated === this.vehicle.fixes.length && this.outbox.length === 0;
  }

  start(): void {
    this.startedAt = Date.now();
    this.connect();
    this.tick();
    this.ticker = setInterval(() => this.tick(), Math.max(20, this.periodMs / 4));
  }

  /** Generates every fix due by now: a late timer catches up instead of slowing the pace. */
  private tick(): void {
    const due = Math.min(this.vehicle.fixes.length, Math.floor((Date.now() - this.startedAt) / this.periodMs) + 1);
    while (this.generatedAt.length < due) {
      this.outbox.push(this.generatedAt.length);
      this.generatedAt.push(Date.now());
    }
    if (this.generatedAt.length === this.vehicle.fixes.length) clearInterval(this.ticker);
    this.send();
  }

  private connect(): void {
    if (this.stopped || this.refused) return;
    const port = this.vehicle.protocol === 'gt06' ? this.server.ports.gt06 : this.server.ports.teltonika;
    const socket = connect(port, this.server.host);
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('connect', () => {
      this.state = 'login';
      socket.write(this.dialect.login(this.imei));
    });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.socket !== socket) return;
      clearTimeout(this.ackTimer);
      this.state = 'idle';
      this.inFlight = []; // what was not acknowledged is still in the outbox and goes again
      this.received = new Uint8Array(0);
      this.socket = undefined;
      if (this.stopped || this.refused) return;
      this.reconnects++;
      setTimeout(() => this.connect(), this.reconnectMs).unref();
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
          this.refused = true;
          this.socket?.destroy();
          return;
        }
        this.state = 'ready';
        this.send();
      } else if (this.state === 'ready') {
        const message = this.dialect.readServerMessage(this.received);
        if (!message) return;
        this.received = this.received.subarray(message.consumed);
        if (message.kind === 'ack' && this.inFlight.length > 0) this.onAck(message.records);
      } else {
        return;
      }
    }
  }

  private onAck(count: number): void {
    clearTimeout(this.ackTimer);
    const now = Date.now();
    const records = this.inFlight.slice(0, Math.min(count, this.inFlight.length));
    for (const k of records) this.ackedAt[k] ??= now;
    this.outbox = this.outbox.filter((k) => !records.includes(k));
    this.inFlight = [];
    this.send();
  }

  private send(): void {
    if (this.state !== 'ready' || this.inFlight.length > 0 || this.outbox.length === 0 || !this.socket) return;
    this.inFlight = this.outbox.slice(0, this.dialect.maxRecordsPerPacket);
    const socket = this.socket;
    socket.write(this.dialect.packet(this.inFlight.map((k) => this.vehicle.fixes[k]!)));
    // A server that never answers: hang up and send again, as trackers do.
    this.ackTimer = setTimeout(() => socket.destroy(), ACK_TIMEOUT_MS);
    this.ackTimer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.ticker);
    clearTimeout(this.ackTimer);
    this.socket?.destroy();
  }
}
