import type pg from 'pg';
import type { Db } from '../../db/database.ts';
import { eventsAfter, lastEventId, type LoggedEvent } from '../../db/event-log.ts';
import { listenForNotifications, type NotificationListener } from '../../db/notification-listener.ts';
import { CoalescedRun } from '../../runtime/coalesced-run.ts';
import type { Logger } from '../../runtime/logger.ts';

export type FeedListener = (events: LoggedEvent[]) => void;

export interface FeedSubscription {
  /** The last id the feed had read when the subscription began: the listener gets every event after it. */
  since: string;
  unsubscribe(): void;
}

export interface EventFeedOptions {
  /** How often the log is read when no notification says it grew. */
  pollMs: number;
}

const READ_LIMIT = 1_000;

/**
 * One reader of the event log per API process, shared by every open stream: it reads what was
 * appended after the last id it saw (woken by NOTIFY on PostgreSQL, by its poll everywhere) and hands
 * each batch to the subscribed streams, which filter it for their keys. Ids are in commit order (see
 * db/event-log.ts), so "after the last id" misses nothing.
 */
export class EventFeed {
  private readonly listeners = new Map<FeedListener, () => void>();
  private lastId = '0';
  private timer: NodeJS.Timeout | undefined;
  private notifications: NotificationListener | undefined;
  private readonly reads = new CoalescedRun(() => this.readNew(), {
    failed: (error) => this.log.warn('event feed cannot read the log; streams wait and catch up', { error: error.message }),
    recovered: () => this.log.info('event feed reads the log again'),
  });

  private constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  static async open(db: Db, log: Logger, pool: pg.Pool | undefined, options: EventFeedOptions): Promise<EventFeed> {
    const feed = new EventFeed(db, log);
    feed.lastId = await lastEventId(db);
    feed.timer = setInterval(() => feed.read(), options.pollMs);
    feed.timer.unref();
    if (pool) {
      feed.notifications = listenForNotifications(pool, 'fleetcore_events', () => feed.read());
      await feed.notifications.ready;
    }
    return feed;
  }

  /** `ended` is called if the feed closes first (the process is stopping). */
  subscribe(listener: FeedListener, ended: () => void = () => undefined): FeedSubscription {
    this.listeners.set(listener, ended);
    return { since: this.lastId, unsubscribe: () => this.listeners.delete(listener) };
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  /** Reads now (or right after the read under way); safe to call at any time. */
  read(): void {
    this.reads.request();
  }

  private async readNew(): Promise<void> {
    for (;;) {
      if (this.listeners.size === 0) {
        // Nobody to hand events to: only keep up, so a stream that opens later starts at the end.
        this.lastId = await lastEventId(this.db);
        return;
      }
      const events = await eventsAfter(this.db, this.lastId, READ_LIMIT);
      if (events.length === 0) return;
      this.lastId = events[events.length - 1]!.id;
      for (const listener of this.listeners.keys()) {
        try {
          listener(events);
        } catch (error) {
          this.log.error('event stream listener failed', { error: (error as Error).stack ?? String(error) });
        }
      }
      if (events.length < READ_LIMIT) return;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.notifications?.close();
    await this.reads.close();
    const ended = [...this.listeners.values()];
    this.listeners.clear();
    for (const end of ended) end();
  }
}
