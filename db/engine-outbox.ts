import { sql } from 'kysely';
import type { Db } from './database.ts';

export interface OutboxRecord {
  id: number;
  kind: string;
  payload: Record<string, unknown>;
  createdAt: Date;
}

/**
 * Claims the oldest unpublished outbox records for `claimMs`, in one short statement: the caller
 * publishes them with no transaction open and then marks them published. Two dispatchers never claim
 * the same record at once; a dispatcher that dies leaves its claim to expire, and the record is
 * claimed and published again (the queue's job id, the record's id, makes that a no-op while the
 * first copy waits).
 */
export async function claimUnpublished(db: Db, limit: number, claimMs: number): Promise<OutboxRecord[]> {
  const { rows } = await sql<{ id: number; kind: string; payload: Record<string, unknown>; created_at: Date }>`
    UPDATE engine_outbox o SET claimed_until = now() + ${claimMs}::float8 * interval '1 millisecond'
    FROM (
      SELECT id FROM engine_outbox
      WHERE published_at IS NULL AND (claimed_until IS NULL OR claimed_until < now())
      ORDER BY id LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ) due
    WHERE o.id = due.id
    RETURNING o.id, o.kind, o.payload, o.created_at
  `.execute(db);
  return rows.sort((a, b) => a.id - b.id).map((r) => ({ id: r.id, kind: r.kind, payload: r.payload, createdAt: r.created_at }));
}

export async function markPublished(db: Db, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`UPDATE engine_outbox SET published_at = now(), claimed_until = NULL WHERE id = ANY(${ids}::bigint[])`.execute(db);
}

/** Deletes published records older than `olderThan`, at most `limit`; unpublished ones are never deleted. */
export async function prunePublishedOutbox(db: Db, olderThan: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM engine_outbox WHERE id IN (
        SELECT id FROM engine_outbox WHERE published_at < ${olderThan.toISOString()}::timestamptz ORDER BY published_at LIMIT ${limit}
      ) RETURNING 1
    ) SELECT count(*)::int AS n FROM gone
  `.execute(db);
  return rows[0]!.n;
}
