import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { StoredFix, StoredReport } from '../domain/stored-rows.ts';

/** A record the database refused, in the form ingest decoded it. */
export type DeadRecord = { kind: 'fix'; fix: StoredFix } | { kind: 'report'; report: StoredReport };

export interface NewDeadLetter {
  record: DeadRecord;
  protocol: string | null;
  frame: Uint8Array | null;
  error: string;
  sqlstate: string | null;
}

export interface DeadLetter {
  id: number;
  deviceId: number | null;
  imei: string | null;
  protocol: string | null;
  record: DeadRecord;
  frameHex: string | null;
  error: string;
  sqlstate: string | null;
  createdAt: Date;
  replayedAt: Date | null;
}

// jsonb holds any JSON text but U+0000; the record is kept whatever it held.
const jsonText = (record: DeadRecord) => JSON.stringify(record).replaceAll('\\u0000', '');

const deviceOf = (record: DeadRecord) => (record.kind === 'fix' ? record.fix.deviceId : record.report.deviceId);

export async function insertDeadLetters(db: Db, letters: NewDeadLetter[]): Promise<void> {
  if (letters.length === 0) return;
  await db
    .insertInto('ingest_dead_letters')
    .values(
      letters.map((l) => ({
        device_id: deviceOf(l.record),
        protocol: l.protocol,
        record: jsonText(l.record),
        frame: l.frame ? Buffer.from(l.frame) : null,
        error: l.error,
        sqlstate: l.sqlstate,
      })),
    )
    .execute();
}

/** Dates came back from JSON as strings; the writers want Dates. */
function revive(record: DeadRecord): DeadRecord {
  if (record.kind === 'fix') {
    const f = record.fix;
    return { kind: 'fix', fix: { ...f, fixTime: new Date(f.fixTime), receivedAt: new Date(f.receivedAt) } };
  }
  const r = record.report;
  return { kind: 'report', report: { ...r, receivedAt: new Date(r.receivedAt), time: r.time ? new Date(r.time) : null } };
}

export async function listDeadLetters(db: Db, options: { imei?: string; ids?: number[]; includeReplayed?: boolean; limit: number }): Promise<DeadLetter[]> {
  const rows = await db
    .selectFrom('ingest_dead_letters as l')
    .leftJoin('devices as d', 'd.id', 'l.device_id')
    .select(['l.id', 'l.device_id', 'd.imei', 'l.protocol', 'l.record', sql<string | null>`encode(l.frame, 'hex')`.as('frame_hex'), 'l.error', 'l.sqlstate', 'l.created_at', 'l.replayed_at'])
    .$if(options.imei !== undefined, (q) => q.where('d.imei', '=', options.imei!))
    .$if(options.ids !== undefined, (q) => q.where('l.id', 'in', options.ids!.length > 0 ? options.ids! : [-1]))
    .$if(!options.includeReplayed, (q) => q.where('l.replayed_at', 'is', null))
    .orderBy('l.id')
    .limit(options.limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    deviceId: r.device_id,
    imei: r.imei,
    protocol: r.protocol,
    record: revive(r.record as unknown as DeadRecord),
    frameHex: r.frame_hex,
    error: r.error,
    sqlstate: r.sqlstate,
    createdAt: r.created_at,
    replayedAt: r.replayed_at,
  }));
}

export async function markDeadLetterReplayed(db: Db, id: number): Promise<void> {
  await db.updateTable('ingest_dead_letters').set({ replayed_at: sql`now()` }).where('id', '=', id).execute();
}

/** A replay that failed again: the newest error replaces the old one. */
export async function recordDeadLetterFailure(db: Db, id: number, error: string, sqlstate: string | null): Promise<void> {
  await db.updateTable('ingest_dead_letters').set({ error, sqlstate }).where('id', '=', id).execute();
}
