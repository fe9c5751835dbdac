import type { Db } from '../../db/database.ts';
import { markPublished, takeUnpublished } from '../../db/engine-outbox.ts';
import type { JobQueue } from '../queue/job-queue.ts';

/**
 * Moves committed outbox records into the webhooks queue, oldest first, one job per record keyed by
 * its id: a dispatcher that dies after publishing but before marking publishes again, and the queue's
 * job id makes that second copy a no-op while the first still waits. Returns how many were moved.
 */
export async function dispatchOutbox(db: Db, webhooks: JobQueue, batch = 500): Promise<number> {
  let moved = 0;
  for (;;) {
    const count = await db.transaction().execute(async (trx) => {
      const records = await takeUnpublished(trx, batch);
      for (const r of records) {
        await webhooks.add(r.kind, { outboxId: r.id, kind: r.kind, createdAt: r.createdAt.toISOString(), ...r.payload }, { jobId: `outbox-${r.id}` });
      }
      await markPublished(trx, records.map((r) => r.id));
      return records.length;
    });
    moved += count;
    if (count < batch) return moved;
  }
}
