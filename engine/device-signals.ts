import type { EngineQueues } from './engine-queues.ts';

/** What DeviceSignals needs of the engine queues: which one a device goes to, and a signal to one. */
export type SignalledQueues = Pick<EngineQueues, 'count' | 'indexOf' | 'signalQueue'>;

/**
 * Ingest's side of the engine queues: the devices of each committed batch are gathered for a few
 * milliseconds and sent as one `devices` job per engine queue they go to, never one job per position
 * (measured: a job per position caps the pipeline near 4,000 positions/s, as Redis runs a script per job).
 * Each queue's devices are gathered apart and a queue whose devices reach `maxDevices` is sent alone:
 * under load each queue's jobs stay full, so N queues carry a job rate each of 1/N of the one queue's
 * rather than N jobs for every one it had.
 */
export class DeviceSignals {
  /** Per queue: the devices waiting, and when the first of them was committed (the engine's lag is measured from it). */
  private readonly waiting: Array<{ devices: Set<number>; since: number }>;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();
  private closing = false;

  constructor(
    private readonly queues: SignalledQueues,
    private readonly onError: (error: Error) => void,
    private readonly delayMs = 100,
    private readonly maxDevices = 2000,
    /** After a failed send, when its devices are sent again. */
    private readonly retryMs = 1000,
  ) {
    this.waiting = Array.from({ length: queues.count }, () => ({ devices: new Set<number>(), since: 0 }));
  }

  add(deviceIds: readonly number[]): void {
    const now = Date.now();
    for (const id of deviceIds) {
      const queue = this.waiting[this.queues.indexOf(id)]!;
      if (queue.devices.size === 0) queue.since = now;
      queue.devices.add(id);
    }
    const full = this.indices((queue) => queue.devices.size >= this.maxDevices);
    if (full.length > 0) this.flush(full);
    if (this.indices((queue) => queue.devices.size > 0).length === 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
    } else {
      this.timer ??= setTimeout(() => this.flushAll(), this.delayMs);
    }
  }

  private indices(which: (queue: { devices: Set<number> }) => boolean): number[] {
    const found: number[] = [];
    this.waiting.forEach((queue, i) => which(queue) && found.push(i));
    return found;
  }

  private flushAll(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flush(this.indices((queue) => queue.devices.size > 0));
  }

  private flush(indices: readonly number[]): void {
    const signals = indices.map((i) => {
      const queue = this.waiting[i]!;
      const signal = { index: i, deviceIds: [...queue.devices], committedAt: queue.since };
      queue.devices = new Set();
      return signal;
    });
    if (signals.length === 0) return;
    // A failed send goes back to wait and is sent again after retryMs (a Redis Cluster failover
    // refuses writes for a few seconds). One still lost (at shutdown) delays evaluation but loses
    // nothing: the engine catches up from its cursors at start and at each ETA refresh.
    this.sending = this.sending.then(async () => {
      await Promise.all(
        signals.map((s) =>
          this.queues.signalQueue(s.index, s.deviceIds, s.committedAt).catch((error: Error) => {
            this.onError(error);
            if (!this.closing) this.putBack(s.index, s.deviceIds, s.committedAt);
          }),
        ),
      );
    });
  }

  private putBack(index: number, deviceIds: readonly number[], since: number): void {
    const queue = this.waiting[index]!;
    queue.since = queue.devices.size === 0 ? since : Math.min(queue.since, since);
    for (const id of deviceIds) queue.devices.add(id);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flushAll(), this.retryMs);
  }

  /** Sends what is waiting, once (shutdown). */
  async close(): Promise<void> {
    this.closing = true;
    this.flushAll();
    await this.sending;
  }
}
