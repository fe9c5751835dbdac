import { sql } from 'kysely';
import type { AccessScope } from './access-scope.ts';
import type { Db } from './database.ts';
import type { WebhookDeliveryStatus } from './schema.ts';

// A key manages the webhooks of its own user and mode: a webhook receives what its owner's key would
// read, so another user's webhook (seeing other vehicles) is not this key's to change.

/** The first key of the advisory lock that makes a user's registrations take turns (the second is the user id). */
const WEBHOOK_LIMIT_LOCK = 0x77686b;

/**
 * Registers a webhook unless the key's user already has `limit` in its mode (undefined then). Call it
 * in a transaction: two registrations racing for the last place take turns on a lock held until the
 * commit, so the count each one reads includes the other's webhook.
 */
export async function insertWebhook(db: Db, scope: AccessScope, webhook: { url: string; events: string[]; description: string | null; secret: string }, limit: number) {
  await sql`SELECT pg_advisory_xact_lock(${WEBHOOK_LIMIT_LOCK}::int, ${scope.userId}::int)`.execute(db);
  const { n } = await db
    .selectFrom('webhooks')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('account_id', '=', scope.accountId).where('user_id', '=', scope.userId).where('mode', '=', scope.mode)
    .executeTakeFirstOrThrow();
  if (n >= limit) return undefined;
  return db
    .insertInto('webhooks')
    .values({ account_id: scope.accountId, user_id: scope.userId, mode: scope.mode, url: webhook.url, events: webhook.events, description: webhook.description, secret: webhook.secret })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findWebhook(db: Db, scope: AccessScope, id: number) {
  return db.selectFrom('webhooks').selectAll().where('account_id', '=', scope.accountId).where('user_id', '=', scope.userId).where('mode', '=', scope.mode).where('id', '=', id).executeTakeFirst();
}

/** A page of the key's webhooks by id, `limit + 1` rows so the caller can tell whether more follow. */
export async function webhookPage(db: Db, scope: AccessScope, afterId: number, limit: number) {
  return db.selectFrom('webhooks').selectAll().where('account_id', '=', scope.accountId).where('user_id', '=', scope.userId).where('mode', '=', scope.mode).where('id', '>', afterId).orderBy('id').limit(limit + 1).execute();
}

export async function updateWebhook(
  db: Db,
  scope: AccessScope,
  id: number,
  changes: { url?: string; events?: string[]; description?: string | null; enabled?: boolean },
) {
  const set: Record<string, unknown> = { updated_at: new Date() };
  if (changes.url !== undefined) set.url = changes.url;
  if (changes.events !== undefined) set.events = changes.events;
  if (changes.description !== undefined) set.description = changes.description;
  // Only a change of state touches the rest: enabling an enabled webhook keeps its run of failures
  // (or anyone could postpone the automatic disabling), and disabling a disabled one keeps its reason.
  if (changes.enabled === true) {
    Object.assign(set, {
      enabled: true,
      disabled_reason: null,
      disabled_at: null,
      consecutive_failures: sql`CASE WHEN enabled THEN consecutive_failures ELSE 0 END`,
    });
  }
  if (changes.enabled === false) {
    Object.assign(set, {
      enabled: false,
      disabled_reason: sql`CASE WHEN enabled THEN ${'disabled through the API'} ELSE disabled_reason END`,
      disabled_at: sql`CASE WHEN enabled THEN now() ELSE disabled_at END`,
    });
  }
  return db.updateTable('webhooks').set(set).where('account_id', '=', scope.accountId).where('user_id', '=', scope.userId).where('mode', '=', scope.mode).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function deleteWebhook(db: Db, scope: AccessScope, id: number): Promise<boolean> {
  const result = await db.deleteFrom('webhooks').where('account_id', '=', scope.accountId).where('user_id', '=', scope.userId).where('mode', '=', scope.mode).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** A new secret; the current one keeps signing beside it until `previousUntil`. */
export async function rotateWebhookSecret(db: Db, scope: AccessScope, id: number, secret: string, previousUntil: Date) {
  const { rows } = await sql<{ id: number }>`
    UPDATE webhooks SET previous_secret = secret, previous_secret_expires_at = ${previousUntil.toISOString()}::timestamptz, secret = ${secret}, updated_at = now()
    WHERE id = ${id} AND account_id = ${scope.accountId} AND user_id = ${scope.userId} AND mode = ${scope.mode}
    RETURNING id
  `.execute(db);
  return rows.length > 0 ? findWebhook(db, scope, id) : undefined;
}

/** A test ping: a delivery of its own with its payload, due now. */
export async function insertTestDelivery(db: Db, webhookId: number, payload: (deliveryId: string) => Record<string, unknown>) {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('webhook_deliveries')
      .values({ webhook_id: webhookId, event_id: null, event_type: 'webhook.test', payload: null, next_attempt_at: new Date() })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx.updateTable('webhook_deliveries').set({ payload: JSON.stringify(payload(String(row.id))) }).where('id', '=', row.id).execute();
    return trx.selectFrom('webhook_deliveries').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
  });
}

/** A page of a webhook's deliveries, newest first (`before` an id). */
export async function deliveryPage(db: Db, webhookId: number, page: { beforeId?: string; status?: WebhookDeliveryStatus; limit: number }) {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId);
  if (page.beforeId !== undefined) query = query.where(sql<boolean>`id < ${page.beforeId}::bigint`);
  if (page.status) query = query.where('status', '=', page.status);
  return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

export async function findDelivery(db: Db, webhookId: number, deliveryId: string) {
  return db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).where(sql<boolean>`id = ${deliveryId}::bigint`).executeTakeFirst();
}

export async function deliveryAttempts(db: Db, deliveryId: string) {
  return db.selectFrom('webhook_delivery_attempts').selectAll().where(sql<boolean>`delivery_id = ${deliveryId}::bigint`).orderBy('attempt').execute();
}

/**
 * A failed (or still pending) delivery is attempted again now, its count of attempts kept; a
 * delivery that succeeded is left alone (undefined). A claim is kept: a worker sending it right now
 * records its own outcome, and clearing the claim would let a second worker send it alongside.
 */
export async function retryDelivery(db: Db, webhookId: number, deliveryId: string) {
  return db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: new Date() })
    .where('webhook_id', '=', webhookId)
    .where(sql<boolean>`id = ${deliveryId}::bigint`)
    .where('status', '<>', 'succeeded')
    .returningAll()
    .executeTakeFirst();
}
