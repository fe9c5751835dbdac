import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Spaces requests to a provider at least `intervalMs` apart, in the order they asked (each takes
 * the next free start time). A request whose turn is more than `maxWaitMs` away is refused at once
 * rather than queued, so a burst never builds a queue that takes minutes to drain.
 */
export class RequestPacer {
  private nextStart = 0;

  constructor(
    private readonly intervalMs: number,
    private readonly maxWaitMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Waits for this request's turn and resolves true, or resolves false at once when the wait would be too long. */
  async turn(signal?: AbortSignal): Promise<boolean> {
    const now = this.now();
    const start = Math.max(now, this.nextStart);
    if (start - now > this.maxWaitMs) return false;
    this.nextStart = start + this.intervalMs;
    if (start > now) await sleep(start - now, undefined, signal ? { signal } : undefined);
    return true;
  }

  /** No request starts before `ms` from now (a provider's Retry-After). */
  holdFor(ms: number): void {
    this.nextStart = Math.max(this.nextStart, this.now() + ms);
  }
}
