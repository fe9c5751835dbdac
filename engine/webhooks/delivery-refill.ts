import type { Db } from '../../db/database.ts';
import { claimDueDeliveries, releaseDeliveries, type ClaimedDelivery, type ClaimRooms } from '../../db/webhook-deliveries.ts';
import type { Logger } from '../../runtime/logger.ts';

/** How often due deliveries left in the database are looked for when no request ending says to. */
const REFILL_POLL_MS = 250;

/**
 * Claims from the database the due deliveries no process had room for, as room frees up here, a few
 * per account in turn (claimDueDeliveries). A refill is wanted when fan-out or the sweep left some
 * unclaimed, a delivery was handed back, or the last refill left some; it runs a batch at a time,
 * never one per request that ends, and at most one at a time.
 */
export class DeliveryRefill {
  private wanted = false;
  private refilling: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private failing = false;
  private lastRefill = 0;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly claimMs: number,
    /** Room for more deliveries in this process, per account. */
    private readonly rooms: () => ClaimRooms & { total: number },
    /** Where the claimed deliveries go. */
    private readonly deliver: (deliveries: ClaimedDelivery[]) => void,
  ) {}

  /** Due deliveries may be waiting in the database for room here. */
  want(): void {
    this.wanted = true;
  }

  get isWanted(): boolean {
    return this.wanted;
  }

  schedule(delayMs = 10): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.refilling) return this.schedule(delayMs);
      this.refilling = this.refill().finally(() => (this.refilling = undefined));
    }, delayMs);
  }

  /** Looks, at most every `everyMs`, whether a wanted refill has waited long enough for no request ending to ask for it. */
  poll(everyMs: number): void {
    this.poller = setInterval(() => {
      if (this.wanted && Date.now() - this.lastRefill >= REFILL_POLL_MS) this.schedule(0);
    }, Math.min(REFILL_POLL_MS, everyMs));
    this.poller.unref();
  }

  /** No refill starts again; resolves when the one running has ended (what it claims then is handed back). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.poller);
    clearTimeout(this.timer);
    await this.refilling;
  }

  private async refill(): Promise<void> {
    const rooms = this.rooms();
    if (rooms.total === 0) return; // a request ending asks again
    this.lastRefill = Date.now();
    this.wanted = false;
    try {
      const { deliveries, more } = await claimDueDeliveries(this.db, { claimMs: this.claimMs, limit: rooms.total, rooms });
      if (more) this.wanted = true;
      this.failing = false;
      if (this.closed) await releaseDeliveries(this.db, deliveries.map((d) => d.id));
      else this.deliver(deliveries);
    } catch (error) {
      this.wanted = true;
      if (!this.failing) this.log.warn('webhook refill failed; retrying', { error: (error as Error).message });
      this.failing = true;
    }
  }
}
