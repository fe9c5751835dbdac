import type { DatabaseHandle } from './database.ts';
import { copyFixBatch } from './position-copy.ts';
import { storeFixBatch } from './position-batches.ts';
import type { StoredFix, StoredReport } from '../domain/stored-rows.ts';

export type BatchWrite = (fixes: StoredFix[], reports: StoredReport[]) => Promise<void>;

/** The fastest batch writer the database offers: COPY on PostgreSQL, multi-row INSERT on the embedded one. */
export function fixBatchWriter(handle: DatabaseHandle): BatchWrite {
  const { pool, db } = handle;
  return pool ? (fixes, reports) => copyFixBatch(pool, db, fixes, reports) : (fixes, reports) => storeFixBatch(db, fixes, reports);
}
