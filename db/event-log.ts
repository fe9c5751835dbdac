import { sql, type RawBuilder } from 'kysely';
import type { EventType, EventTypePatterns } from '../domain/events/event-catalog.ts';
import { eventDataJson, type NewEvent } from '../domain/events/event-payloads.ts';
import type { AccessScope } from './access-scope.ts';
import type { Db } from './database.ts';
import type { DeviceMode } from './schema.ts';

/** One logged event as readers receive it. */
export interface LoggedEvent {
  id: string;
  accountId: number;
  deviceId: number | null;
  userId: number | null;
  mode: DeviceMode | null;
  type: EventType;
  occurredAt: Date;
  recordedAt: Date;
  data: Record<string, unknown>;
}

// Any constant works as long as every writer uses the same one.
const EVENT_LOG_LOCK = 0x666c6576; // "flev"

/**
 * Appends events to the log inside the caller's transaction; returns the ids of those that were new.
 *
 * Writers serialise on a transaction-level advisory lock, released only after their commit is
 * visible, so ids are handed out in commit order: a reader that has seen id N will never later see
 * an id below N appear. That is what lets pages, streams and webhook fan-out resume "after id N" with
 * no gap. The lock is held from here to the commit, so call this last in the transaction, after any
 * row locks it needs: nothing then waits on it but the commit itself.
 */
export async function appendEvents(trx: Db, events: NewEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const [lock, insert] = appendEventsSql(events) as [RawBuilder<unknown>, RawBuilder<{ id: string }>];
  await lock.execute(trx);
  const { rows } = await insert.execute(trx);
  return rows.map((r) => r.id);
}

/**
 * appendEvents as statements, for a writer that runs its own transaction on a raw connection (ingest's
 * COPY batches): the lock, then one insert that notifies the log's followers. The same rule holds: run
 * them last in the transaction, in order.
 */
export function appendEventsSql(events: NewEvent[]): RawBuilder<unknown>[] {
  if (events.length === 0) return [];
  const data = events.map(eventDataJson);
  const insert = sql<{ id: string }>`
    WITH inserted AS (
      INSERT INTO events (account_id, device_id, user_id, mode, type, occurred_at, data, dedupe_key)
      SELECT coalesce(d.account_id, e.account_id), e.device_id, e.user_id, coalesce(d.mode, e.mode), e.type, e.occurred_at,
        CASE WHEN d.id IS NULL THEN e.data::jsonb
          ELSE jsonb_build_object('vehicle', jsonb_build_object('id', d.imei, 'name', d.name, 'plates', d.plates, 'imei', d.imei)) || e.data::jsonb END,
        e.dedupe_key
      FROM unnest(${events.map((e) => e.type)}::text[], ${events.map((e) => e.occurredAt.toISOString())}::timestamptz[],
        ${events.map((e) => e.deviceId ?? null)}::int[], ${events.map((e) => e.accountId ?? null)}::int[],
        ${events.map((e) => e.userId ?? null)}::int[], ${events.map((e) => e.mode ?? null)}::text[],
        ${data}::text[], ${events.map((e) => e.dedupeKey)}::text[])
        WITH ORDINALITY AS e(type, occurred_at, device_id, account_id, user_id, mode, data, dedupe_key, n)
      LEFT JOIN devices d ON d.id = e.device_id
      WHERE d.id IS NOT NULL OR e.account_id IS NOT NULL
      ORDER BY e.n
      ON CONFLICT (dedupe_key) DO NOTHING
      RETURNING id
    )
    -- One notification with the newest id, and none when every event was a duplicate.
    SELECT i.id::text AS id FROM inserted i
    CROSS JOIN (SELECT pg_notify('fleetcore_events', max(id)::text) FROM inserted HAVING count(*) > 0) notified
    ORDER BY i.id
  `;
  return [sql`SELECT pg_advisory_xact_lock(${EVENT_LOG_LOCK})`, insert];
}

interface EventRow {
  id: string;
  account_id: number;
  device_id: number | null;
  user_id: number | null;
  mode: DeviceMode | null;
  type: EventType;
  occurred_at: Date;
  recorded_at: Date;
  data: Record<string, unknown>;
}

const toEvent = (r: EventRow): LoggedEvent => ({
  id: r.id, accountId: r.account_id, deviceId: r.device_id, userId: r.user_id, mode: r.mode,
  type: r.type, occurredAt: r.occurred_at, recordedAt: r.recorded_at, data: r.data,
});

const COLUMNS = sql`e.id::text AS id, e.account_id, e.device_id, e.user_id, e.mode, e.type, e.occurred_at, e.recorded_at, e.data`;

/** Events a key may see: of its user's vehicles in its mode, and the account's vehicle-less events meant for it. */
export function visibleTo(scope: AccessScope): RawBuilder<unknown> {
  return sql`e.account_id = ${scope.accountId} AND (
    (e.device_id IS NULL AND (e.user_id IS NULL OR e.user_id = ${scope.userId}) AND (e.mode IS NULL OR e.mode = ${scope.mode}))
    OR (e.device_id IS NOT NULL AND e.mode = ${scope.mode}
        AND EXISTS (SELECT 1 FROM user_devices ud WHERE ud.user_id = ${scope.userId} AND ud.device_id = e.device_id)))`;
}

export interface EventFilter {
  types?: EventTypePatterns;
  /** Internal device ids. */
  deviceIds?: number[];
  from?: Date;
  to?: Date;
}

function filterSql(filter: EventFilter): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [];
  if (filter.types && (filter.types.exact.length > 0 || filter.types.prefixes.length > 0)) {
    const likes = filter.types.prefixes.map((p) => `${p}%`);
    parts.push(sql`(e.type = ANY(${filter.types.exact}::text[]) OR e.type LIKE ANY(${likes}::text[]))`);
  }
  if (filter.deviceIds) parts.push(sql`e.device_id = ANY(${filter.deviceIds}::int[])`);
  if (filter.from) parts.push(sql`e.occurred_at >= ${filter.from.toISOString()}::timestamptz`);
  if (filter.to) parts.push(sql`e.occurred_at <= ${filter.to.toISOString()}::timestamptz`);
  return parts.length === 0 ? sql`true` : sql.join(parts, sql` AND `);
}

/**
 * One page of the log as a key sees it, by id: newest first (`before` an id) or oldest first (`after`
 * one). Returns up to `limit + 1` rows so the caller can tell whether more follow.
 */
export async function eventPage(
  db: Db,
  scope: AccessScope,
  filter: EventFilter,
  page: { order: 'asc' | 'desc'; afterId?: string; beforeId?: string; limit: number },
): Promise<LoggedEvent[]> {
  const bound =
    page.order === 'asc'
      ? page.afterId !== undefined ? sql`e.id > ${page.afterId}::bigint` : sql`true`
      : page.beforeId !== undefined ? sql`e.id < ${page.beforeId}::bigint` : sql`true`;
  const { rows } = await sql<EventRow>`
    SELECT ${COLUMNS} FROM events e
    WHERE ${visibleTo(scope)} AND ${filterSql(filter)} AND ${bound}
    ORDER BY e.id ${page.order === 'asc' ? sql`ASC` : sql`DESC`}
    LIMIT ${page.limit + 1}
  `.execute(db);
  return rows.map(toEvent);
}

/** Every account's events after an id, oldest first: what live followers (streams, webhook fan-out) read. */
export async function eventsAfter(db: Db, afterId: string, limit: number): Promise<LoggedEvent[]> {
  const { rows } = await sql<EventRow>`
    SELECT ${COLUMNS} FROM events e WHERE e.id > ${afterId}::bigint ORDER BY e.id LIMIT ${limit}
  `.execute(db);
  return rows.map(toEvent);
}

/** The newest id in the log, or "0" when it is empty. */
export async function lastEventId(db: Db): Promise<string> {
  const { rows } = await sql<{ id: string }>`SELECT coalesce(max(id), 0)::text AS id FROM events`.execute(db);
  return rows[0]!.id;
}

/**
 * Deletes events that happened before `olderThan`, at most `limit`, never one webhook fan-out has
 * not read yet. A stream resumed from a pruned id gets what is left after it.
 */
export async function pruneEvents(db: Db, olderThan: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM events WHERE id IN (
        SELECT id FROM events
        WHERE recorded_at < ${olderThan.toISOString()}::timestamptz AND id <= (SELECT last_event_id FROM event_fanout_cursor)
        ORDER BY id LIMIT ${limit}
      ) RETURNING 1
    ) SELECT count(*)::int AS n FROM gone
  `.execute(db);
  return rows[0]!.n;
}
