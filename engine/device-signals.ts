import type { EngineQueues } from './engine-queues.ts';

/**
 * Ingest's side of the engine queue: the devices of each committed batch are gathered for a few
 * milliseconds and sent as one `devices` job per engine queue they go to, never one job per position
 * (measured: a job per position caps the pipeline near 4,000 positions/s, as Redis runs a script per job).
 */
export class DeviceSignals {
  private waiting = new Set<number>();
  /** When the first of the waiting devices was committed: the engine's lag is measured from it. */
  private since = 0;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();

  constructor(
    private readonly queues: Pick<EngineQueues, 'signal'>,
    private readonly onError: (error: Error) => void,
    private readonly delayMs = 100,
    private readonly maxDevices = 2000,
  ) {}

  add(deviceIds: readonly number[]): void {
    if (this.waiting.size === 0) this.since = Date.now();
    for (const id of deviceIds) this.waiting.add(id);
    if (this.waiting.size >= this.maxDevices) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.delayMs);
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiting.size === 0) return;
    const deviceIds = [...this.waiting];
    const committedAt = this.since;
    this.waiting = new Set();
    // A lost signal delays evaluation but loses nothing: the engine catches up from its cursors at
    // start and each device's next batch signals it again.
    this.sending = this.sending.then(() => this.queues.signal(deviceIds, committedAt).catch(this.onError));
  }

  /** Sends what is waiting (shutdown). */
  async close(): Promise<void> {
    this.flush();
    await this.sending;
  }
}
