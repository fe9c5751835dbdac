import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Spaces requests to a provider at least `intervalMs` apart, one after another in the order they
 * asked. The interval is counted from when the previous request really started, not from when it
 * was due, so a late timer on a busy machine never lets two requests out closer together. A request
 * whose turn is more than `maxWaitMs` away is refused at once rather than queued, so a burst never
 * builds a queue that takes minutes to drain.
 */
export class RequestPacer {
  private lastStart = Number.NEGATIVE_INFINITY;
  private heldUntil = Number.NEGATIVE_INFINITY;
  private waiting = 0;
  private previous: Promise<void> = Promise.resolve();

  constructor(
    private readonly intervalMs: number,
    private readonly maxWaitMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Waits for this request's turn and resolves true, or resolves false at once when the wait would be too long. */
  async turn(signal?: AbortSignal): Promise<boolean> {
    const now = this.now();
    const due = Math.max(now, this.earliest()) + this.waiting * this.intervalMs;
    if (due - now > this.maxWaitMs) return false;
    this.waiting++;
    const before = this.previous;
    let done!: () => void;
    this.previous = new Promise((resolve) => (done = resolve));
    try {
      await before;
      // Again after each sleep: a Retry-After may have pushed the start further meanwhile.
      for (let wait = this.earliest() - this.now(); wait > 0; wait = this.earliest() - this.now()) {
        await sleep(wait, undefined, signal ? { signal } : undefined);
      }
      this.lastStart = this.now();
      return true;
    } finally {
      this.waiting--;
      done();
    }
  }

  /** No request starts before `ms` from now (a provider's Retry-After). */
  holdFor(ms: number): void {
    this.heldUntil = Math.max(this.heldUntil, this.now() + ms);
  }

  private earliest(): number {
    return Math.max(this.lastStart + this.intervalMs, this.heldUntil);
  }
}
