import type { Logger } from '../../runtime/logger.ts';

/** How long one part may take to stop before the rest stop without it. */
export const PART_STOP_TIMEOUT_MS = 15_000;
/** How long all of them may take: under the 30 s a supervisor (Kubernetes, systemd) gives before SIGKILL. */
export const STOP_TIMEOUT_MS = 25_000;
/** What each part still gets once that is spent: enough to close what is already closing. */
const LAST_CHANCE_MS = 250;

/**
 * What a start has opened, stopped in reverse order: whatever started last (and may depend on what
 * came before) stops first, whether the start completed or failed half-way. A stop that fails is
 * logged and the rest still stop. So is one that hangs (a Redis node that went away mid-command can
 * hold a queue's close forever): after its deadline it is logged by name and left behind, so the
 * database still closes (committing what ingest buffered) and the process still exits. With Redis
 * and PostgreSQL both gone several parts hang, so the deadlines also share one budget for the whole stop.
 */
export class ShutdownStack {
  private readonly stops: Array<{ name: string; stop: () => Promise<void> | void }> = [];

  constructor(
    private readonly log: Logger,
    private readonly partTimeoutMs = PART_STOP_TIMEOUT_MS,
    private readonly totalTimeoutMs = STOP_TIMEOUT_MS,
  ) {}

  push(name: string, stop: () => Promise<void> | void): void {
    this.stops.push({ name, stop });
  }

  async stopAll(): Promise<void> {
    const end = Date.now() + this.totalTimeoutMs;
    for (const { name, stop } of this.stops.splice(0).reverse()) {
      const timeoutMs = Math.min(this.partTimeoutMs, Math.max(LAST_CHANCE_MS, end - Date.now()));
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      try {
        const outcome = await Promise.race([Promise.resolve().then(stop), deadline]);
        if (outcome === 'timeout') this.log.error('did not stop in time; stopping the rest without it', { part: name, timeoutMs });
      } catch (error) {
        this.log.error('could not stop cleanly', { part: name, error: (error as Error).message });
      } finally {
        clearTimeout(timer);
      }
    }
  }
}
