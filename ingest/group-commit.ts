import type { BatchWrite } from '../db/fix-batch-writer.ts';
import type { StoredFix, StoredReport } from '../db/position-batches.ts';

export interface GroupCommitOptions {
  /** Flush as soon as this many rows wait. */
  maxBatch: number;
  /** Flush at the latest this long after the first row arrived. */
  maxDelayMs: number;
  /** Batches written at the same time, each on its own connection. */
  maxInFlight: number;
  /** Told of each failed attempt to write a batch that will be retried (database unreachable). */
  onRetry?: (error: Error, attempt: number) => void;
}

/** Waits between attempts while the database is unreachable: quick at first, then every 2 s. */
const RETRY_DELAYS_MS = [50, 100, 250, 500, 1000, 2000];

interface Waiter {
  fixes: StoredFix[];
  reports: StoredReport[];
  resolve(): void;
  reject(error: Error): void;
}

/**
 * Gathers the fixes of every connection into shared batches, one transaction each, and tells each
 * submitter when its rows are committed: that is when its tracker may be acknowledged.
 *
 * While the database is unreachable a batch is retried, not dropped: its submitters keep waiting, and
 * as each connection reads nothing more until its frame is answered, the trackers' data waits in the
 * trackers (backpressure), not in our memory. Rows the database rejects as data (bad values) refuse
 * only the submitter that sent them. On shutdown, a batch that still cannot be written is refused, so
 * its trackers resend to the next server.
 */
export class GroupCommitWriter {
  private queue: Waiter[] = [];
  private queuedRows = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private readonly idle: Array<() => void> = [];
  private closing = false;

  constructor(
    private readonly write: BatchWrite,
    private readonly onCommitted: (deviceIds: number[]) => void,
    private readonly options: GroupCommitOptions = { maxBatch: 1000, maxDelayMs: 5, maxInFlight: 2 },
  ) {}

  submit(fixes: StoredFix[], reports: StoredReport[] = []): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ fixes, reports, resolve, reject });
      this.queuedRows += fixes.length + reports.length;
      if (this.queuedRows >= this.options.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.maxDelayMs);
    });
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length === 0) return;
    if (this.inFlight >= this.options.maxInFlight) {
      // Rows keep gathering while the database is busy; the next free slot takes them all.
      return;
    }
    const batch = this.queue;
    this.queue = [];
    this.queuedRows = 0;
    this.inFlight++;
    this.writeBatch(batch).finally(() => {
      this.inFlight--;
      if (this.queue.length > 0) this.flush();
      else if (this.inFlight === 0) for (const done of this.idle.splice(0)) done();
    });
  }

  private async writeBatch(batch: Waiter[]): Promise<void> {
    const fixes = batch.flatMap((w) => w.fixes);
    const reports = batch.flatMap((w) => w.reports);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.write(fixes, reports);
        break;
      } catch (error) {
        if (isDataError(error)) {
          // One device's unstorable row must not stall every tracker that shared its batch: each
          // submitter is written on its own, so only the one holding that row is refused.
          if (batch.length > 1) for (const waiter of batch) await this.writeBatch([waiter]);
          else batch[0]!.reject(error as Error);
          return;
        }
        if (this.closing) {
          for (const w of batch) w.reject(error as Error);
          return;
        }
        this.options.onRetry?.(error as Error, attempt);
        await new Promise((r) => setTimeout(r, RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1]));
      }
    }
    for (const w of batch) w.resolve();
    const devices = new Set<number>();
    for (const f of fixes) devices.add(f.deviceId);
    if (devices.size > 0) this.onCommitted([...devices]);
  }

  /**
   * Writes what is waiting and resolves once nothing is in flight (shutdown). A batch the database
   * still refuses gets one more attempt and is then refused, rather than holding the shutdown.
   */
  async drain(): Promise<void> {
    this.closing = true;
    this.flush();
    if (this.inFlight === 0 && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.idle.push(resolve));
  }
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity): the rows are at fault, not the database. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}
