import { sql } from 'kysely';
import type { Db } from './database.ts';

export interface OutboxRecord {
  id: number;
  kind: string;
  payload: Record<string, unknown>;
  createdAt: Date;
}

/**
 * The oldest unpublished outbox records, locked so two dispatchers never take the same ones; the
 * caller publishes them and marks them in the same transaction.
 */
export async function takeUnpublished(trx: Db, limit: number): Promise<OutboxRecord[]> {
  const { rows } = await sql<{ id: number; kind: string; payload: Record<string, unknown>; created_at: Date }>`
    SELECT id, kind, payload, created_at FROM engine_outbox WHERE published_at IS NULL
    ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED
  `.execute(trx);
  return rows.map((r) => ({ id: r.id, kind: r.kind, payload: r.payload, createdAt: r.created_at }));
}

export async function markPublished(trx: Db, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`UPDATE engine_outbox SET published_at = now() WHERE id = ANY(${ids}::bigint[])`.execute(trx);
}
