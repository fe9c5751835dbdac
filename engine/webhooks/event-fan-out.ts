import type { Db } from '../../db/database.ts';
import { fanOutEvents } from '../../db/webhook-deliveries.ts';
import { CoalescedRun } from '../../runtime/coalesced-run.ts';
import type { Logger } from '../../runtime/logger.ts';
import { engineMetrics } from '../engine-metrics.ts';
import type { DeliveryDispatcher } from './delivery-dispatcher.ts';

/** Events read per fan-out statement; a full batch means more may follow at once. */
const FAN_OUT_BATCH = 1_000;

/**
 * Follows the event log for webhooks: each wake reads the events after the fan-out cursor, turns them
 * into deliveries (fanOutEvents), claims for this process what it has room for and hands those to
 * the dispatcher; what it had no room for stays due in the database for a refill. One read at a
 * time: a wake during a read makes one more read after it. A failing read is said once, and retried
 * at the next wake.
 */
export class EventFanOut {
  private readonly reads = new CoalescedRun(() => this.readAll(), {
    failed: (error) => this.log.warn('webhook fan-out failed; retrying', { error: error.message }),
  });

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly claimMs: number,
    private readonly dispatcher: DeliveryDispatcher,
  ) {}

  /** Reads the log now, or once more after the read in progress (a notification, a poll). */
  readonly wake = (): void => this.reads.request();

  /** No read starts again; resolves when the one running has ended. */
  close(): Promise<void> {
    return this.reads.close();
  }

  private async readAll(): Promise<void> {
    for (;;) {
      const { deliveries, events, types, unclaimed } = await fanOutEvents(this.db, FAN_OUT_BATCH, this.claimMs, this.dispatcher.rooms());
      for (const [type, n] of Object.entries(types)) engineMetrics.events.inc({ type }, n);
      this.dispatcher.dispatch(deliveries);
      if (unclaimed > 0) this.dispatcher.moreDue();
      if (events < FAN_OUT_BATCH) return;
    }
  }
}
