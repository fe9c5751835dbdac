import type { Db } from '../../db/database.ts';
import { claimUnpublished, markPublished, type OutboxRecord } from '../../db/engine-outbox.ts';
import type { JobQueue } from '../queue/job-queue.ts';

export interface DispatchOptions {
  /** Records claimed and published at a time. */
  batch?: number;
  /** How long a claim holds; a dispatcher that died is replaced after it. */
  claimMs?: number;
}

/** One job per record, keyed by its id: a second add of the same record is a no-op while the first waits. */
export async function publishOutboxRecords(webhooks: JobQueue, records: OutboxRecord[]): Promise<void> {
  for (const r of records) {
    await webhooks.add(r.kind, { outboxId: r.id, kind: r.kind, createdAt: r.createdAt.toISOString(), ...r.payload }, { jobId: `outbox-${r.id}` });
  }
}

/**
 * Moves committed outbox records into the webhooks queue, oldest first: claim (one short statement),
 * publish (network calls, no transaction open, so nothing is locked while Redis answers), mark
 * published (one short statement). A dispatcher that dies between publishing and marking publishes
 * again once its claim expires; the job id keeps that second copy from doubling the first while it
 * waits, so delivery is at least once and, in practice, once. Returns how many were moved.
 */
export async function dispatchOutbox(db: Db, webhooks: JobQueue, options: DispatchOptions = {}): Promise<number> {
  const batch = options.batch ?? 500;
  const claimMs = options.claimMs ?? 60_000;
  let moved = 0;
  for (;;) {
    const records = await claimUnpublished(db, batch, claimMs);
    if (records.length === 0) return moved;
    await publishOutboxRecords(webhooks, records);
    await markPublished(db, records.map((r) => r.id));
    moved += records.length;
    if (records.length < batch) return moved;
  }
}
