import type { Logger } from '../../runtime/logger.ts';

/** How long one part may take to stop before the rest stop without it. */
export const PART_STOP_TIMEOUT_MS = 15_000;

/**
 * What a start has opened, stopped in reverse order: whatever started last (and may depend on what
 * came before) stops first, whether the start completed or failed half-way. A stop that fails is
 * logged and the rest still stop. So is one that hangs (a Redis node that went away mid-command can
 * hold a queue's close forever): after its deadline it is logged by name and left behind, so the
 * database still closes (committing what ingest buffered) and the process still exits.
 */
export class ShutdownStack {
  private readonly stops: Array<{ name: string; stop: () => Promise<void> | void }> = [];

  constructor(
    private readonly log: Logger,
    private readonly partTimeoutMs = PART_STOP_TIMEOUT_MS,
  ) {}

  push(name: string, stop: () => Promise<void> | void): void {
    this.stops.push({ name, stop });
  }

  async stopAll(): Promise<void> {
    for (const { name, stop } of this.stops.splice(0).reverse()) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), this.partTimeoutMs);
      });
      try {
        const outcome = await Promise.race([Promise.resolve().then(stop), deadline]);
        if (outcome === 'timeout') this.log.error('did not stop in time; stopping the rest without it', { part: name, timeoutMs: this.partTimeoutMs });
      } catch (error) {
        this.log.error('could not stop cleanly', { part: name, error: (error as Error).message });
      } finally {
        clearTimeout(timer);
      }
    }
  }
}
