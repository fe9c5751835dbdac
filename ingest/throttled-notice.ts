import type { Logger } from '../runtime/logger.ts';

/**
 * A warning logged at most once per key (a device, an IMEI) per interval: a tracker that keeps sending
 * the same bad data is told about once an hour, not once a frame.
 */
export class ThrottledNotice {
  private readonly loggedAt = new Map<string, number>();

  constructor(
    private readonly log: Logger,
    private readonly intervalMs = 3_600_000,
    private readonly maxKeys = 100_000,
  ) {}

  warn(key: string, message: string, fields: Record<string, unknown>): void {
    const now = Date.now();
    if (now - (this.loggedAt.get(key) ?? -Infinity) < this.intervalMs) return;
    if (this.loggedAt.size >= this.maxKeys) this.loggedAt.clear();
    this.loggedAt.set(key, now);
    this.log.warn(message, fields);
  }
}
