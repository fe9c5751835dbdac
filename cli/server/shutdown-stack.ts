import type { Logger } from '../../runtime/logger.ts';

/**
 * What a start has opened, stopped in reverse order: whatever started last (and may depend on what
 * came before) stops first, whether the start completed or failed half-way. A stop that fails is
 * logged and the rest still stop.
 */
export class ShutdownStack {
  private readonly stops: Array<{ name: string; stop: () => Promise<void> | void }> = [];

  constructor(private readonly log: Logger) {}

  push(name: string, stop: () => Promise<void> | void): void {
    this.stops.push({ name, stop });
  }

  async stopAll(): Promise<void> {
    for (const { name, stop } of this.stops.splice(0).reverse()) {
      try {
        await stop();
      } catch (error) {
        this.log.error('could not stop cleanly', { part: name, error: (error as Error).message });
      }
    }
  }
}
