/** What a CoalescedRun says of its runs: a failure once until a run succeeds, then the recovery. */
export interface RunReport {
  failed(error: Error): void;
  recovered?(): void;
}

/**
 * A task run one at a time however often it is asked for: a request while it runs makes one more run
 * after it (one, not one per request), so whatever arrived during a run is read by the next. A
 * failing run is reported once until a run succeeds again, since every retry would say the same; the
 * next request retries it.
 */
export class CoalescedRun {
  private running: Promise<void> | undefined;
  private again = false;
  private failing = false;
  private closed = false;

  constructor(
    private readonly task: () => Promise<void>,
    private readonly report: RunReport,
  ) {}

  /** Runs now, or once more after the run under way; nothing once closed. Safe to call at any time. */
  readonly request = (): void => {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.task()
      .then(() => {
        if (this.failing) this.report.recovered?.();
        this.failing = false;
      })
      .catch((error: Error) => {
        if (!this.failing) this.report.failed(error);
        this.failing = true;
      })
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.request();
        }
      });
  };

  /** No run starts again; resolves when the one under way has ended. */
  async close(): Promise<void> {
    this.closed = true;
    await this.running;
  }
}
