import type { NewDeadLetter } from '../db/dead-letters.ts';
import type { BatchWrite } from '../db/fix-batch-writer.ts';
import type { StoredFix, StoredReport } from '../domain/stored-rows.ts';
import { classifyWriteFailure, sqlState } from '../db/write-failure.ts';
import { StoreFailedError } from './store-failed-error.ts';
import { WaitListFullError } from './wait-list-full-error.ts';

export interface GroupCommitOptions {
  /** Flush as soon as this many rows wait. */
  maxBatch: number;
  /** Flush at the latest this long after the first row arrived. */
  maxDelayMs: number;
  /** Batches written at the same time, each on its own connection. */
  maxInFlight: number;
  /** Rows held at once, waiting or being written; past it a submission is refused. */
  maxWaitingRows: number;
  /** Estimated bytes held at once; past it a submission is refused. */
  maxWaitingBytes: number;
}

export interface GroupCommitEvents {
  /** A batch's devices whose fixes are committed (never once per position). */
  committed(deviceIds: number[]): void;
  /** The fixes of a batch just committed, for the `vehicle.position` feed. */
  fixesCommitted?(fixes: StoredFix[]): void;
  /** A failed attempt that will be retried (the database is unreachable, or lost a race). */
  retrying?(error: Error, attempt: number): void;
  /** A batch failed for good: its submitters are refused. */
  failed?(error: StoreFailedError, rows: number): void;
  /** Records the database refused as data, now kept as dead letters; their submitters are acknowledged. */
  deadLettered?(count: number): void;
  /** A batch settled (committed, dead-lettered or failed): its rows and how long it took, retries included. */
  batchSettled?(rows: number, seconds: number): void;
}

export interface Submission {
  fixes: StoredFix[];
  reports?: StoredReport[];
  /** For dead letters: the protocol and the frame the rows came in. */
  protocol?: string;
  frame?: Uint8Array;
}

/**
 * Default bounds of the wait list. Each connection holds at most one frame in it (it reads nothing more
 * until that frame is answered), so these are only met with tens of thousands of trackers sending big
 * frames while the database is slow: 100,000 rows is ~3 s of 30,000 fixes/s.
 */
export const DEFAULT_MAX_WAITING_ROWS = 100_000;
export const DEFAULT_MAX_WAITING_BYTES = 128 * 1024 * 1024;

/** Waits between attempts while the database is unreachable: quick at first, then every 2 s. */
const RETRY_DELAYS_MS = [50, 100, 250, 500, 1000, 2000];

interface Waiter {
  submission: Submission;
  rows: number;
  bytes: number;
  cancelled: boolean;
  resolve(): void;
  reject(error: Error): void;
}

/** A row's share of memory: the object and its fields, plus its attributes' keys and text. */
function estimatedBytes(rows: Array<{ attributes?: Record<string, unknown> }>): number {
  let bytes = 0;
  for (const row of rows) {
    bytes += 320;
    for (const key in row.attributes) {
      const v = row.attributes[key];
      bytes += 48 + key.length + (typeof v === 'string' ? v.length : 0);
    }
  }
  return bytes;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Gathers the fixes of every connection into shared batches, one transaction each, and tells each
 * submitter when its rows are committed: that is when its tracker may be acknowledged.
 *
 * Failures are told apart by what would fix them. While the database is unreachable a batch is
 * retried, not dropped: its submitters keep waiting, and as each connection reads nothing more until
 * its frame is answered, the trackers' data waits in the trackers. Rows the database rejects as data
 * are found (batch, then submitter, then row) and kept as dead letters, and their submitters are
 * acknowledged, so one bad record never stalls a tracker. Any other error fails the batch at once.
 *
 * Memory is bounded: past `maxWaitingRows` or `maxWaitingBytes` held (waiting or being written), a
 * submission is refused with WaitListFullError. A submission whose connection closed (its `signal`
 * aborted) leaves the list, and its rows leave the batch's next attempt.
 */
export class GroupCommitWriter {
  private queue: Waiter[] = [];
  private queuedRows = 0;
  private heldRows = 0;
  private heldBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private readonly idle: Array<() => void> = [];
  private closing = false;

  constructor(
    private readonly write: BatchWrite,
    private readonly deadLetter: (letters: NewDeadLetter[]) => Promise<void>,
    private readonly events: GroupCommitEvents,
    private readonly options: GroupCommitOptions,
  ) {}

  /** Rows and estimated bytes held now, waiting or being written. */
  get held(): { rows: number; bytes: number } {
    return { rows: this.heldRows, bytes: this.heldBytes };
  }

  /** Resolves once the submission's rows are committed (or kept as dead letters). */
  submit(submission: Submission, signal?: AbortSignal): Promise<void> {
    const reports = submission.reports ?? [];
    const rows = submission.fixes.length + reports.length;
    const bytes = estimatedBytes(submission.fixes) + estimatedBytes(reports);
    if (this.heldRows > 0 && (this.heldRows + rows > this.options.maxWaitingRows || this.heldBytes + bytes > this.options.maxWaitingBytes)) {
      return Promise.reject(new WaitListFullError(`commit wait list is full (${this.heldRows} rows, ~${Math.round(this.heldBytes / 1024)} KiB held)`));
    }
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { submission, rows, bytes, cancelled: false, resolve, reject };
      this.heldRows += rows;
      this.heldBytes += bytes;
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', abort);
        this.heldRows -= rows;
        this.heldBytes -= bytes;
        outcome();
      };
      waiter.resolve = () => settle(resolve);
      waiter.reject = (error) => settle(() => reject(error));
      const abort = () => this.cancel(waiter, signal!.reason as Error);
      signal?.addEventListener('abort', abort, { once: true });
      this.queue.push(waiter);
      this.queuedRows += rows;
      if (this.queuedRows >= this.options.maxBatch) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), this.options.maxDelayMs);
    });
  }

  /** A submitter gone (its connection closed): out of the queue, or out of its batch's next attempt. */
  private cancel(waiter: Waiter, reason: Error): void {
    if (waiter.cancelled) return;
    waiter.cancelled = true;
    const at = this.queue.indexOf(waiter);
    if (at >= 0) {
      this.queue.splice(at, 1);
      this.queuedRows -= waiter.rows;
    }
    waiter.reject(reason);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queue.length === 0) return;
    // Rows keep gathering while the database is busy; the next free slot takes them all.
    if (this.inFlight >= this.options.maxInFlight) return;
    const batch = this.queue;
    const rows = this.queuedRows;
    this.queue = [];
    this.queuedRows = 0;
    this.inFlight++;
    const started = performance.now();
    this.store(batch)
      .catch((error: Error) => {
        // store() settles every waiter itself; this is a bug's last resort, not a path.
        for (const w of batch) if (!w.cancelled) w.reject(error);
      })
      .finally(() => {
        this.events.batchSettled?.(rows, (performance.now() - started) / 1000);
        this.inFlight--;
        if (this.queue.length > 0) this.flush();
        else if (this.inFlight === 0) for (const done of this.idle.splice(0)) done();
      });
  }

  /** Writes the waiters' rows in one transaction, retrying what can be retried; settles every waiter. */
  private async store(batch: Waiter[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const live = batch.filter((w) => !w.cancelled);
      if (live.length === 0) return;
      const fixes = live.flatMap((w) => w.submission.fixes);
      const reports = live.flatMap((w) => w.submission.reports ?? []);
      let failure: unknown;
      try {
        await this.write(fixes, reports);
      } catch (error) {
        failure = error;
      }
      if (failure === undefined) {
        for (const w of live) w.resolve();
        this.committed(fixes);
        return;
      }
      const kind = classifyWriteFailure(failure);
      if (kind === 'retryable' && !this.closing) {
        this.events.retrying?.(failure as Error, attempt);
        await sleep(RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1]!);
        continue;
      }
      if (kind === 'data') {
        // One device's bad row must not stall every tracker that shared its batch: halve the batch
        // until the submitter holding it is alone (a few writes, not one per submitter).
        if (live.length > 1) {
          const half = Math.ceil(live.length / 2);
          await this.store(live.slice(0, half));
          await this.store(live.slice(half));
        } else {
          await this.storeRowByRow(live[0]!);
        }
        return;
      }
      this.fail(live, failure, fixes.length + reports.length);
      return;
    }
  }

  /**
   * The last step for a submitter whose rows the database refuses: each row on its own, and those still
   * refused kept as dead letters, so the tracker is acknowledged and moves on instead of sending the
   * same record for ever.
   */
  private async storeRowByRow(waiter: Waiter): Promise<void> {
    const { fixes, reports = [], protocol, frame } = waiter.submission;
    const records: NewDeadLetter['record'][] = [
      ...fixes.map((fix) => ({ kind: 'fix' as const, fix })),
      ...reports.map((report) => ({ kind: 'report' as const, report })),
    ];
    const stored: StoredFix[] = [];
    const letters: NewDeadLetter[] = [];
    try {
      for (const record of records) {
        if (waiter.cancelled) return;
        try {
          await this.retrying(() => (record.kind === 'fix' ? this.write([record.fix], []) : this.write([], [record.report])));
          if (record.kind === 'fix') stored.push(record.fix);
        } catch (error) {
          if (classifyWriteFailure(error) !== 'data') throw error;
          letters.push({ record, protocol: protocol ?? null, frame: frame ?? null, error: (error as Error).message, sqlstate: sqlState(error) ?? null });
        }
      }
      if (letters.length > 0) {
        await this.retrying(() => this.deadLetter(letters));
        this.events.deadLettered?.(letters.length);
      }
    } catch (error) {
      this.committed(stored);
      this.fail([waiter], error, records.length);
      return;
    }
    this.committed(stored);
    waiter.resolve();
  }

  /** Runs a write, retrying while the failure is retryable (and the writer not closing). */
  private async retrying(write: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (error) {
        if (classifyWriteFailure(error) !== 'retryable' || this.closing) throw error;
        this.events.retrying?.(error as Error, attempt);
        await sleep(RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1]!);
      }
    }
  }

  private fail(waiters: Waiter[], cause: unknown, rows: number): void {
    const state = sqlState(cause);
    const error = new StoreFailedError(
      `could not store ${rows} row(s)${state ? ` (SQLSTATE ${state})` : ''}: ${(cause as Error)?.message ?? String(cause)}`,
      state,
      { cause },
    );
    this.events.failed?.(error, rows);
    for (const w of waiters) if (!w.cancelled) w.reject(error);
  }

  private committed(fixes: StoredFix[]): void {
    if (fixes.length === 0) return;
    const devices = new Set<number>();
    for (const f of fixes) devices.add(f.deviceId);
    this.events.committed([...devices]);
    this.events.fixesCommitted?.(fixes);
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
