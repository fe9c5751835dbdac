import { sql } from 'kysely';
import type { Db } from './database.ts';
import { eventPayload, webhookDisabledEvent, type EventPayload } from '../domain/events/event-payloads.ts';
import { appendEvents } from './event-log.ts';
import type { EventType } from '../domain/events/event-catalog.ts';

interface ClaimRow {
  id: string; webhook_id: number; account_id: number; url: string; secret: string; previous_secret: string | null; previous_until: Date | null;
  attempts: number; payload: EventPayload | null; event_id: string | null; type: EventType | null; occurred_at: Date | null; data: Record<string, unknown> | null;
  recorded_at: Date | null;
}

/**
 * How many deliveries a process can take now: `accounts` by id, `others` for every account not named
 * (see FairLanes.rooms). Absent, it takes every one.
 */
export interface ClaimRooms {
  accounts: Record<number, number>;
  others: number;
}

const ALL_ROOMS: ClaimRooms = { accounts: {}, others: 2_147_483_647 };

/**
 * Turns the events logged after the fan-out cursor into deliveries, one per matching webhook, and
 * moves the cursor past them, in one transaction; the cursor row's lock makes processes take turns.
 * A webhook matches an event of its account that its user could read with a key of its mode (the
 * rule of `visibleTo`), whose type its patterns take, and that was logged after it was registered.
 * The new deliveries come back already claimed for `claimMs`, ready to send (their first attempt needs
 * no queue round trip), as many per account as `rooms` gives it, in event order; the rest are left
 * due and unclaimed for claimDueDeliveries, and counted in `unclaimed`. Returns them and how many
 * events were read.
 */
export async function fanOutEvents(
  db: Db,
  limit: number,
  claimMs: number,
  rooms: ClaimRooms = ALL_ROOMS,
): Promise<{ deliveries: ClaimedDelivery[]; events: number; /** The events read, counted by type. */ types: Record<string, number>; unclaimed: number }> {
  // One statement, so one round trip however busy the process is; the cursor row's lock makes
  // processes take turns, and the unique (webhook, event) pair keeps a turn that re-reads from adding twice.
  const { rows } = await sql<ClaimRow & { events: number; types: Record<string, number>; unclaimed: number }>`
    WITH cursor AS (
      SELECT last_event_id FROM event_fanout_cursor FOR UPDATE
    ), batch AS (
      -- The cursor as a scalar: joined as a row, the planner walks the log's index from its start.
      SELECT e.* FROM events e WHERE e.id > (SELECT last_event_id FROM cursor) ORDER BY e.id LIMIT ${limit}
    ), matched AS (
      SELECT w.id AS webhook_id, w.account_id, e.id AS event_id, e.type,
        row_number() OVER (PARTITION BY w.account_id ORDER BY e.id, w.id) AS turn
      FROM batch e
      JOIN webhooks w ON w.account_id = e.account_id AND w.enabled AND w.created_at <= e.recorded_at
      WHERE (e.type = ANY(w.events) OR EXISTS (SELECT 1 FROM unnest(w.events) p WHERE p LIKE '%*' AND e.type LIKE replace(p, '*', '%')))
        AND CASE WHEN e.device_id IS NULL
          THEN (e.user_id IS NULL OR e.user_id = w.user_id) AND (e.mode IS NULL OR e.mode = w.mode)
          ELSE e.mode = w.mode AND EXISTS (SELECT 1 FROM user_devices ud WHERE ud.user_id = w.user_id AND ud.device_id = e.device_id)
        END
    ), inserted AS (
      INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, next_attempt_at, claimed_until)
      SELECT m.webhook_id, m.event_id, m.type, now(),
        CASE WHEN m.turn <= coalesce((${JSON.stringify(rooms.accounts)}::jsonb ->> m.account_id::text)::int, ${rooms.others}::int)
          THEN now() + ${claimMs}::float8 * interval '1 millisecond' END
      FROM matched m
      ORDER BY m.event_id, m.webhook_id
      ON CONFLICT (webhook_id, event_id) DO NOTHING
      RETURNING id, webhook_id, event_id, claimed_until
    ), moved AS (
      UPDATE event_fanout_cursor SET last_event_id = (SELECT max(id) FROM batch) WHERE EXISTS (SELECT 1 FROM batch)
    ), counted AS (
      SELECT coalesce(sum(n), 0)::int AS events, coalesce(jsonb_object_agg(type, n), '{}'::jsonb) AS types,
        (SELECT count(*)::int FROM inserted WHERE claimed_until IS NULL) AS unclaimed
      FROM (SELECT type, count(*)::int AS n FROM batch GROUP BY type) per_type
    )
    SELECT counted.events, counted.types, counted.unclaimed, d.*
    FROM counted LEFT JOIN (
      SELECT i.id::text AS id, i.webhook_id, w.account_id, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at AS previous_until, 0 AS attempts,
        NULL::jsonb AS payload, i.event_id::text AS event_id, e.type, e.occurred_at, e.data, e.recorded_at
      FROM inserted i JOIN webhooks w ON w.id = i.webhook_id JOIN batch e ON e.id = i.event_id
      WHERE i.claimed_until IS NOT NULL
    ) d ON true
    ORDER BY d.id::bigint
  `.execute(db);
  const events = rows[0]?.events ?? 0;
  const deliveries = rows.filter((r) => r.id !== null).map(claimedDelivery).filter((d): d is ClaimedDelivery => d !== undefined);
  return { deliveries, events, types: rows[0]?.types ?? {}, unclaimed: rows[0]?.unclaimed ?? 0 };
}

function claimedDelivery(r: ClaimRow): ClaimedDelivery | undefined {
  const payload = r.payload ?? (r.event_id !== null && r.type !== null ? eventPayload({ id: r.event_id, type: r.type, occurredAt: r.occurred_at!, data: r.data! }) : undefined);
  if (!payload) return undefined;
  const secrets = [r.secret];
  if (r.previous_secret && r.previous_until && r.previous_until.getTime() > Date.now()) secrets.push(r.previous_secret);
  return { id: r.id, webhookId: r.webhook_id, accountId: r.account_id, url: r.url, secrets, attempts: r.attempts, payload, recordedAt: r.recorded_at ?? undefined };
}

export interface ClaimedDelivery {
  id: string;
  webhookId: number;
  /** The webhook's account: deliveries are sent fairly across accounts. */
  accountId: number;
  url: string;
  /** The secrets that sign: the current one, and the previous one while a rotation lasts. */
  secrets: string[];
  /** What was attempted before this one. */
  attempts: number;
  payload: EventPayload;
  /** When the event was written to the log (absent for a test ping): the delivery delay is measured from it. */
  recordedAt?: Date;
}

/**
 * Takes the pending deliveries among `deliveryIds` whose time has come for `claimMs`, so a duplicate
 * job or a second process does nothing with them meanwhile; one statement for the lot. A delivery
 * not due, already taken, finished, or of a disabled webhook (its deliveries wait for it to be
 * enabled again) is left out of the result.
 */
export async function claimDeliveries(db: Db, deliveryIds: string[], claimMs: number): Promise<Map<string, ClaimedDelivery>> {
  const claimed = new Map<string, ClaimedDelivery>();
  if (deliveryIds.length === 0) return claimed;
  const { rows } = await sql<ClaimRow>`
    WITH claimed AS (
      UPDATE webhook_deliveries d SET claimed_until = now() + ${claimMs}::float8 * interval '1 millisecond'
      FROM webhooks w
      WHERE d.id = ANY(${deliveryIds}::bigint[]) AND w.id = d.webhook_id AND w.enabled AND d.status = 'pending'
        AND d.next_attempt_at <= now() + interval '1 second' AND (d.claimed_until IS NULL OR d.claimed_until < now())
      RETURNING d.id, d.webhook_id, w.account_id, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at AS previous_until, d.attempts, d.payload, d.event_id
    )
    SELECT c.id::text AS id, c.webhook_id, c.account_id, c.url, c.secret, c.previous_secret, c.previous_until, c.attempts, c.payload, c.event_id::text AS event_id,
      e.type, e.occurred_at, e.data, e.recorded_at
    FROM claimed c LEFT JOIN events e ON e.id = c.event_id
  `.execute(db);
  for (const delivery of await sendable(db, rows)) claimed.set(delivery.id, delivery);
  return claimed;
}

/** The claimed rows as deliveries to send; one whose event was pruned before it could be delivered is finished as failed. */
async function sendable(db: Db, rows: ClaimRow[]): Promise<ClaimedDelivery[]> {
  const deliveries: ClaimedDelivery[] = [];
  for (const r of rows) {
    const delivery = claimedDelivery(r);
    if (delivery) deliveries.push(delivery);
    else await finishAttempt(db, { deliveryId: r.id, webhookId: r.webhook_id, attempt: r.attempts + 1, durationMs: 0, error: 'event no longer in the log', outcome: 'failed', maxConsecutiveFailures: Number.POSITIVE_INFINITY });
  }
  return deliveries;
}

/**
 * Claims due deliveries no process holds, for `claimMs`, a few per account in turn: the earliest due
 * of every account before any account's second, at most `rooms` gives each account and `limit` in
 * all. So however long one account's backlog, another account's due delivery is among the first
 * taken. Each enabled webhook's earliest pending deliveries are read by index, never its whole
 * history. A second process running this at the same time skips what the first took (the update
 * re-checks the claim). `more`: due deliveries were left (no room, or past `limit`).
 */
export async function claimDueDeliveries(
  db: Db,
  options: { claimMs: number; limit: number; rooms: ClaimRooms },
): Promise<{ deliveries: ClaimedDelivery[]; more: boolean }> {
  if (options.limit <= 0) return { deliveries: [], more: true };
  const rooms = JSON.stringify(options.rooms.accounts);
  const others = options.rooms.others;
  // One more than any account may take: a webhook with more due than that always leaves one over, so `more` sees it.
  const perWebhook = Math.max(others, ...Object.values(options.rooms.accounts)) + 1;
  const { rows } = await sql<ClaimRow & { more: boolean }>`
    WITH candidates AS (
      SELECT d.id, w.account_id, d.next_attempt_at
      FROM webhooks w
      CROSS JOIN LATERAL (
        SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
        WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= now()
          AND (d.claimed_until IS NULL OR d.claimed_until < now())
        ORDER BY d.next_attempt_at, d.id
        LIMIT ${perWebhook}
      ) d
      WHERE w.enabled
    ), ranked AS (
      SELECT id, account_id, row_number() OVER (PARTITION BY account_id ORDER BY next_attempt_at, id) AS turn FROM candidates
    ), picked AS (
      SELECT id FROM ranked
      WHERE turn <= coalesce((${rooms}::jsonb ->> account_id::text)::int, ${others}::int)
      ORDER BY turn, id
      LIMIT ${options.limit}
    ), claimed AS (
      UPDATE webhook_deliveries d SET claimed_until = now() + ${options.claimMs}::float8 * interval '1 millisecond'
      FROM webhooks w
      WHERE d.id IN (SELECT id FROM picked) AND w.id = d.webhook_id AND w.enabled AND d.status = 'pending'
        AND (d.claimed_until IS NULL OR d.claimed_until < now())
      RETURNING d.id, d.webhook_id, w.account_id, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at AS previous_until, d.attempts, d.payload, d.event_id
    )
    SELECT (SELECT count(*) FROM candidates) > (SELECT count(*) FROM picked) AS more,
      c.id::text AS id, c.webhook_id, c.account_id, c.url, c.secret, c.previous_secret, c.previous_until, c.attempts, c.payload, c.event_id::text AS event_id,
      e.type, e.occurred_at, e.data, e.recorded_at
    FROM (SELECT 1) one
    LEFT JOIN (claimed c LEFT JOIN events e ON e.id = c.event_id) ON true
  `.execute(db);
  const claimed = rows.filter((r) => r.id !== null);
  return { deliveries: await sendable(db, claimed), more: rows[0]?.more ?? false };
}

/** Hands claimed deliveries back without an attempt (their account had no room here), for any process to claim. */
export async function releaseDeliveries(db: Db, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  await sql`UPDATE webhook_deliveries SET claimed_until = NULL WHERE id = ANY(${deliveryIds}::bigint[]) AND status = 'pending'`.execute(db);
}

export interface AttemptRecord {
  deliveryId: string;
  webhookId: number;
  attempt: number;
  durationMs: number;
  statusCode?: number;
  error?: string;
  /** succeeded; retry at `nextAttemptAt`; failed (no attempt left); gone (410: the webhook is disabled at once). */
  outcome: 'succeeded' | 'retry' | 'failed' | 'gone';
  nextAttemptAt?: Date;
  /** Events in a row that may end failed before the webhook is disabled. */
  maxConsecutiveFailures: number;
}

/**
 * Records one attempt and what follows from it: the attempt row, the delivery's status, the
 * webhook's run of failed events (reset by a success) and, when it is disabled (410, or too many
 * failed events in a row), a `webhook.disabled` event, all in one transaction (a success or a retry
 * goes through recordAttempts). Returns whether the webhook was disabled.
 */
/**
 * Records attempts that succeeded or will be retried, one statement for the lot: the attempt rows,
 * the deliveries' status and next attempt, and a success resetting its webhook's run of failures.
 */
export async function recordAttempts(db: Db, records: AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  const col = <T>(f: (r: AttemptRecord) => T) => records.map(f);
  await sql`
    WITH r AS (
      SELECT * FROM unnest(${col((r) => r.deliveryId)}::bigint[], ${col((r) => r.webhookId)}::int[], ${col((r) => r.attempt)}::int[],
        ${col((r) => r.statusCode ?? null)}::int[], ${col((r) => r.error ?? null)}::text[], ${col((r) => r.durationMs)}::int[],
        ${col((r) => (r.outcome === 'retry' ? 'pending' : 'succeeded'))}::text[], ${col((r) => r.nextAttemptAt?.toISOString() ?? null)}::timestamptz[])
        AS r(delivery_id, webhook_id, attempt, status_code, error, duration_ms, status, next_attempt_at)
    ), attempts AS (
      INSERT INTO webhook_delivery_attempts (delivery_id, attempt, attempted_at, status_code, error, duration_ms)
      SELECT delivery_id, attempt, now(), status_code, error, duration_ms FROM r
      ON CONFLICT (delivery_id, attempt) DO NOTHING
    ), deliveries AS (
      UPDATE webhook_deliveries d SET status = r.status, attempts = r.attempt, last_attempt_at = now(), last_status_code = r.status_code,
        last_error = r.error, last_duration_ms = r.duration_ms, next_attempt_at = r.next_attempt_at, claimed_until = NULL
      FROM r WHERE d.id = r.delivery_id
    ), webhooks_ok AS (
      UPDATE webhooks w SET consecutive_failures = 0
      WHERE w.consecutive_failures > 0 AND w.id IN (SELECT webhook_id FROM r WHERE status = 'succeeded')
    )
    SELECT 1
  `.execute(db);
}

export async function finishAttempt(db: Db, a: AttemptRecord): Promise<{ disabled: boolean }> {
  if (a.outcome === 'succeeded' || a.outcome === 'retry') {
    await recordAttempts(db, [a]);
    return { disabled: false };
  }
  return db.transaction().execute(async (trx) => {
    const at = new Date();
    await trx
      .insertInto('webhook_delivery_attempts')
      .values({ delivery_id: a.deliveryId, attempt: a.attempt, attempted_at: at, status_code: a.statusCode ?? null, error: a.error ?? null, duration_ms: a.durationMs })
      .onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing())
      .execute();
    await trx
      .updateTable('webhook_deliveries')
      .set({
        status: 'failed', attempts: a.attempt, last_attempt_at: at, last_status_code: a.statusCode ?? null, last_error: a.error ?? null,
        last_duration_ms: a.durationMs, next_attempt_at: null, claimed_until: null,
      })
      .where(sql<boolean>`id = ${a.deliveryId}::bigint`)
      .execute();
    const { rows } = await sql<{ failures: number; enabled: boolean; account_id: number; user_id: number; mode: 'live' | 'test'; url: string }>`
      UPDATE webhooks SET consecutive_failures = consecutive_failures + 1 WHERE id = ${a.webhookId}
      RETURNING consecutive_failures AS failures, enabled, account_id, user_id, mode, url
    `.execute(trx);
    const webhook = rows[0];
    if (!webhook || !webhook.enabled) return { disabled: false };
    const reason =
      a.outcome === 'gone' ? 'the receiver answered 410 Gone'
      : webhook.failures >= a.maxConsecutiveFailures ? `${webhook.failures} events in a row failed every attempt`
      : undefined;
    if (!reason) return { disabled: false };
    await trx.updateTable('webhooks').set({ enabled: false, disabled_reason: reason, disabled_at: at, updated_at: at }).where('id', '=', a.webhookId).execute();
    await appendEvents(trx, [webhookDisabledEvent(
      { id: a.webhookId, accountId: webhook.account_id, userId: webhook.user_id, mode: webhook.mode, url: webhook.url }, reason, at, a,
    )]);
    return { disabled: true };
  });
}

/**
 * Pending deliveries of enabled webhooks due within `withinMs` and free by then, each with the time it
 * may be tried: what the queue must hold. A claim that runs out within `withinMs` (its process died
 * mid-request: a live one clears its claims when it records the answer) counts as free from a second
 * after it ends, so the delivery is taken up then rather than a whole sweep later. Of what is due
 * already, at most `perAccount` of each account, so one account's backlog cannot fill `limit`; the
 * rest of a backlog is claimed by claimDueDeliveries as room frees up. What falls due later in the
 * window always gets its timed job: a refill running before then finds it not yet due, and it would
 * otherwise wait a whole sweep. Accounts are taken in turn, so no account's retries fill `limit`.
 */
export async function dueDeliveries(
  db: Db,
  withinMs: number,
  limit: number,
  perAccount = limit,
): Promise<Array<{ id: string; attempts: number; nextAttemptAt: Date }>> {
  const { rows } = await sql<{ id: string; attempts: number; next_attempt_at: Date }>`
    SELECT id, attempts, next_attempt_at FROM (
      SELECT d.id::text AS id, d.attempts, greatest(d.next_attempt_at, d.claimed_until + interval '1 second') AS next_attempt_at,
        row_number() OVER (PARTITION BY w.account_id ORDER BY greatest(d.next_attempt_at, d.claimed_until + interval '1 second'), d.id) AS turn
      FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id AND w.enabled
      WHERE d.status = 'pending' AND d.next_attempt_at <= now() + ${withinMs}::float8 * interval '1 millisecond'
        AND (d.claimed_until IS NULL OR d.claimed_until < now() + ${withinMs}::float8 * interval '1 millisecond')
    ) due
    WHERE turn <= ${perAccount} OR next_attempt_at > now()
    ORDER BY turn, next_attempt_at LIMIT ${limit}
  `.execute(db);
  return rows.map((r) => ({ id: r.id, attempts: r.attempts, nextAttemptAt: r.next_attempt_at }));
}

/** Deletes finished deliveries (and their attempts) older than `olderThan`, at most `limit`. */
export async function pruneFinishedDeliveries(db: Db, olderThan: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM webhook_deliveries WHERE id IN (
        SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND created_at < ${olderThan.toISOString()}::timestamptz LIMIT ${limit}
      ) RETURNING 1
    ) SELECT count(*)::int AS n FROM gone
  `.execute(db);
  return rows[0]!.n;
}
