import type { Db } from '../../db/database.ts';
import { claimDeliveries, recordAttempts, releaseDeliveries, type AttemptRecord, type ClaimedDelivery } from '../../db/webhook-deliveries.ts';
import { StatementBatcher } from './statement-batcher.ts';

export interface DeliveryBatches {
  /** Claims a delivery for `claimMs`; undefined when it is not due, or is claimed elsewhere. */
  claim: StatementBatcher<string, ClaimedDelivery | undefined>;
  /** Records an attempt that succeeded or will be retried (the others are finished one at a time). */
  record: StatementBatcher<AttemptRecord, void>;
  /** Hands a claimed delivery back, due and unclaimed. */
  release: StatementBatcher<string, void>;
}

/** The statements every delivery makes, each gathered across the deliveries in flight (StatementBatcher). */
export function deliveryBatches(db: Db, claimMs: number): DeliveryBatches {
  return {
    claim: new StatementBatcher(
      async (ids) => {
        const claimed = await claimDeliveries(db, [...new Set(ids)], claimMs);
        // A duplicate id in one batch is claimed once, for its first caller.
        const handed = new Set<string>();
        return ids.map((id) => (handed.has(id) ? undefined : (handed.add(id), claimed.get(id))));
      },
      { maxDelayMs: 5, maxItems: 200 },
    ),
    record: new StatementBatcher<AttemptRecord, void>(async (batch) => {
      await recordAttempts(db, batch);
      return batch.map(() => undefined);
    }, { maxDelayMs: 10, maxItems: 200 }),
    release: new StatementBatcher<string, void>(async (ids) => {
      await releaseDeliveries(db, ids);
      return ids.map(() => undefined);
    }, { maxDelayMs: 10, maxItems: 500 }),
  };
}
