import type { Db } from '../../db/database.ts';
import { releaseDeliveries, type ClaimedDelivery, type ClaimRooms } from '../../db/webhook-deliveries.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { DeliveryBatches } from './delivery-batches.ts';
import { DeliveryRefill } from './delivery-refill.ts';
import { FairLanes } from './fair-lanes.ts';

/** Deliveries an account may hold in this process (in flight and waiting), in requests it may have in flight. */
const HOLD_PER_SLOT = 4;

export interface DispatchLimits {
  /** Requests in flight at once in this process. */
  concurrency: number;
  /** Requests of one account in flight at once as of right (more with slots no other account wants, see FairLanes). */
  perAccount: number;
  /** Requests of one webhook in flight at once. */
  perWebhook: number;
  /** How long a claim lasts, and how long a request may take: together they bound a delivery's wait here. */
  claimMs: number;
  timeoutMs: number;
}

/**
 * The claimed deliveries this process holds, and which it sends when. Fair across accounts
 * (FairLanes): at most `concurrency` requests at once, `perAccount` of one account as of right and
 * more only while a share's worth of slots stays free for others, and a free slot goes to the
 * account served longest ago. It holds only a few deliveries per account beyond
 * those in flight (`holdPerAccount`): the rest stay due and unclaimed in the database, where whichever
 * process has room claims them (DeliveryRefill). So a slow or dead receiver fills its own account's
 * share, never the slots other accounts need, and the engine does not wait for any of it.
 */
export class DeliveryDispatcher {
  readonly holdPerAccount: number;
  private readonly lanes: FairLanes<ClaimedDelivery>;
  private readonly refill: DeliveryRefill;
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly batches: DeliveryBatches,
    limits: DispatchLimits,
    private readonly send: (delivery: ClaimedDelivery, done: () => void) => Promise<void>,
  ) {
    // As many as it may have in flight with lent slots (FairLanes), so a lone busy account has work for them.
    this.holdPerAccount = Math.max(limits.perAccount, limits.concurrency - limits.perAccount) * HOLD_PER_SLOT;
    this.lanes = new FairLanes<ClaimedDelivery>({
      concurrency: limits.concurrency,
      perAccount: limits.perAccount,
      perWebhook: limits.perWebhook,
      holdPerAccount: this.holdPerAccount,
      holdTotal: limits.concurrency * HOLD_PER_SLOT,
      // A claim that would run out during the request is let go: whoever claims it next sends it, and
      // sending it here too would send it twice.
      maxWaitMs: limits.claimMs - limits.timeoutMs - 5_000,
    });
    this.refill = new DeliveryRefill(db, log, limits.claimMs, () => this.lanes.rooms(), (deliveries) => this.dispatch(deliveries));
  }

  /** Room for more deliveries here, per account: what fan-out may claim for this process. */
  rooms(): ClaimRooms & { total: number } {
    return this.lanes.rooms();
  }

  /** Queues claimed deliveries in their lanes and starts what may start. */
  dispatch(deliveries: ClaimedDelivery[]): void {
    for (const d of deliveries) this.lanes.add(d);
    this.pump();
  }

  /** A retry, a manual retry, or one the sweep found: claimed here, then sent like a new one if its account has room. */
  async deliver(deliveryId: string): Promise<void> {
    const delivery = await this.batches.claim.call(deliveryId);
    if (!delivery) return;
    if (this.lanes.room(delivery.accountId) > 0) this.dispatch([delivery]);
    else this.release([delivery]);
  }

  /** Due deliveries were left in the database (fan-out or the sweep had no room for them here): claim them as room frees up. */
  moreDue(): void {
    this.refill.want();
    this.refill.schedule();
  }

  /** Looks for due deliveries every `everyMs` (at most 250 ms) when a refill is wanted and no request ending asked for one. */
  pollRefills(everyMs: number): void {
    this.refill.poll(everyMs);
  }

  /** No refill starts again; resolves when the one running has ended. */
  stopRefills(): Promise<void> {
    return this.refill.close();
  }

  /** Hands back the deliveries still waiting, for another process to claim at once, and waits for those in flight. */
  async close(): Promise<void> {
    await releaseDeliveries(this.db, this.lanes.takeWaiting().map((d) => d.id)).catch((error: Error) =>
      this.log.warn('webhook deliveries not handed back at stop; their claims run out instead', { error: error.message }));
    await Promise.allSettled([...this.running]);
  }

  /** Hands deliveries back to the database, due and unclaimed, for whichever process has room. */
  private release(deliveries: ClaimedDelivery[]): void {
    if (deliveries.length === 0) return;
    this.refill.want();
    for (const d of deliveries) {
      this.batches.release.call(d.id).catch((error: Error) => this.log.warn('webhook delivery release failed; its claim runs out instead', { deliveryId: d.id, error: error.message }));
    }
  }

  private pump(): void {
    for (let d = this.lanes.next(); d; d = this.lanes.next()) this.start(d);
    this.release(this.lanes.takeStale());
  }

  private start(delivery: ClaimedDelivery): void {
    const sending = this.send(delivery, () => {
      this.lanes.done(delivery);
      this.pump();
      // Claimed a batch at a time, not one per request that ends.
      if (this.refill.isWanted && (this.lanes.room(delivery.accountId) >= this.holdPerAccount / 2 || this.lanes.waiting === 0)) this.refill.schedule();
    }).catch((error: Error) => this.log.warn('webhook delivery failed', { deliveryId: delivery.id, webhookId: delivery.webhookId, eventId: delivery.payload.id, error: error.message }));
    this.running.add(sending);
    void sending.finally(() => this.running.delete(sending));
  }
}
