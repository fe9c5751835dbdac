import type { Db } from '../db/database.ts';
import { recordPresence, type PresenceChange } from '../db/device-presence.ts';
import { classifyWriteFailure } from '../db/write-failure.ts';
import type { Logger } from '../runtime/logger.ts';

export interface PresenceLogOptions {
  /** Changes written per transaction. */
  batch: number;
  /** Changes held while the database is unreachable; past it the oldest are dropped (and logged). */
  maxQueued: number;
  /** Wait before writing again after a retryable failure. */
  retryMs: number;
}

const DEFAULTS: PresenceLogOptions = { batch: 1000, maxQueued: 100_000, retryMs: 1000 };

/**
 * `device.online` / `device.offline` off the frame path: a connection tells its changes and goes on;
 * one writer records them in order (db/device-presence.ts), gathering those that queue up meanwhile
 * into one transaction, so a thousand trackers reconnecting after a network blip cost a few commits,
 * not a thousand. While the database is unreachable the changes wait and are written again.
 */
export class PresenceLog {
  private queue: PresenceChange[] = [];
  private writing: Promise<void> | undefined;
  private open = 0;
  private dropped = 0;
  private stopping = false;
  private readonly options: PresenceLogOptions;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    options: Partial<PresenceLogOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** The server is shutting down: connections closing from now on close for that reason. */
  get shuttingDown(): boolean {
    return this.stopping;
  }

  online(change: Omit<PresenceChange, 'kind'>): void {
    this.open++;
    this.add({ kind: 'online', ...change });
  }

  offline(change: Omit<PresenceChange, 'kind'>): void {
    this.open--;
    this.add({ kind: 'offline', ...change });
  }

  private add(change: PresenceChange): void {
    this.queue.push(change);
    if (this.queue.length > this.options.maxQueued) {
      this.queue.shift();
      if (this.dropped++ === 0) this.log.warn('presence changes dropped: the database has been unreachable too long', { kept: this.options.maxQueued });
    }
    this.writing ??= this.writeAll();
  }

  private async writeAll(): Promise<void> {
    // A tick first, so changes made together (a burst of connects) go in one transaction.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, this.options.batch);
      try {
        await recordPresence(this.db, batch);
        this.queue.splice(0, batch.length);
      } catch (error) {
        if (classifyWriteFailure(error) === 'retryable' && !this.stopping) {
          await new Promise((resolve) => setTimeout(resolve, this.options.retryMs));
          continue;
        }
        this.queue.splice(0, batch.length);
        this.log.warn('presence changes not logged', { changes: batch.length, error: (error as Error).message });
      }
    }
    this.writing = undefined;
    this.dropped = 0;
  }

  /**
   * Shutdown: waits (at most `timeoutMs`) for every identified connection to have told its offline and
   * for the writes to finish, so the log says which devices the shutdown disconnected.
   */
  async close(timeoutMs = 5_000): Promise<void> {
    this.stopping = true;
    const deadline = Date.now() + timeoutMs;
    while ((this.open > 0 || this.writing) && Date.now() < deadline) {
      if (this.open === 0 && this.writing) await Promise.race([this.writing, new Promise((r) => setTimeout(r, deadline - Date.now()))]);
      else await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Marks the start of shutdown before the listeners close their connections. */
  shutdown(): void {
    this.stopping = true;
  }
}
