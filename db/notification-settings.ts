import { sql } from 'kysely';
import type { Db } from './database.ts';

// A user's own addresses for notifications and the browsers they subscribed for web push: each
// user's alone, the same in both modes (as the user is), changed only by the user.

/** The first key of the advisory lock that makes a user's push subscriptions take turns (the second is the user id). */
const PUSH_LIMIT_LOCK = 0x707368;

export interface OwnChannels {
  /** The user's own address for notifications; null: their sign-in email. */
  email: string | null;
  signInEmail: string;
  telegramChatId: string | null;
  phone: string | null;
  muted: boolean;
  mutedUntil: Date | null;
}

/** The user's channels; a user who never set any has none but their sign-in email. */
export async function ownChannels(db: Db, userId: number): Promise<OwnChannels | undefined> {
  const row = await db
    .selectFrom('users as u')
    .leftJoin('notification_channels as c', 'c.user_id', 'u.id')
    .select(['u.email as sign_in_email', 'c.email', 'c.telegram_chat_id', 'c.phone', 'c.muted', 'c.muted_until'])
    .where('u.id', '=', userId)
    .where('u.removed_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    email: row.email, signInEmail: row.sign_in_email, telegramChatId: row.telegram_chat_id, phone: row.phone,
    muted: row.muted ?? false, mutedUntil: row.muted_until,
  };
}

export interface ChannelChanges {
  email?: string | null;
  telegramChatId?: string | null;
  phone?: string | null;
  muted?: boolean;
  mutedUntil?: Date | null;
}

/** Sets the fields given, making the user's row on the first change. */
export async function changeOwnChannels(db: Db, userId: number, changes: ChannelChanges): Promise<void> {
  const set = {
    ...(changes.email !== undefined ? { email: changes.email } : {}),
    ...(changes.telegramChatId !== undefined ? { telegram_chat_id: changes.telegramChatId } : {}),
    ...(changes.phone !== undefined ? { phone: changes.phone } : {}),
    ...(changes.muted !== undefined ? { muted: changes.muted } : {}),
    ...(changes.mutedUntil !== undefined ? { muted_until: changes.mutedUntil } : {}),
  };
  await db
    .insertInto('notification_channels')
    .values({ user_id: userId, ...set })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ ...set, updated_at: new Date() }))
    .execute();
}

export interface PushSubscriptionKeys {
  endpoint: string;
  p256dh: string;
  auth: string;
  userAgent: string | null;
}

export async function pushSubscriptionsOf(db: Db, userId: number) {
  return db.selectFrom('push_subscriptions').select(['id', 'user_agent', 'created_at']).where('user_id', '=', userId).orderBy('id').execute();
}

/**
 * Saves a browser's subscription for the user. An endpoint already stored is the same browser: the
 * user's own gets its new keys; another user's moves to this one (whoever signed in on it last gets
 * its notifications) under a new id, so deliveries queued for its former user are not sent to it. A
 * new one is refused (undefined) when the user already has `limit`. Call it in a transaction: a
 * user's subscriptions take turns on a lock held until the commit, so none slips past the limit.
 */
export async function savePushSubscription(db: Db, userId: number, subscription: PushSubscriptionKeys, limit: number): Promise<{ id: number } | undefined> {
  await sql`SELECT pg_advisory_xact_lock(${PUSH_LIMIT_LOCK}::int, ${userId}::int)`.execute(db);
  const values = { p256dh: subscription.p256dh, auth: subscription.auth, user_agent: subscription.userAgent };
  const existing = await db.selectFrom('push_subscriptions').select(['id', 'user_id']).where('endpoint', '=', subscription.endpoint).executeTakeFirst();
  if (existing?.user_id === userId) {
    await db.updateTable('push_subscriptions').set(values).where('id', '=', existing.id).execute();
    return { id: existing.id };
  }
  const { n } = await db.selectFrom('push_subscriptions').select(sql<number>`count(*)::int`.as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow();
  if (n >= limit) return undefined;
  if (existing) await db.deleteFrom('push_subscriptions').where('id', '=', existing.id).execute();
  return db.insertInto('push_subscriptions').values({ ...values, user_id: userId, endpoint: subscription.endpoint }).returning('id').executeTakeFirstOrThrow();
}

/** Deletes one of the user's own subscriptions; another user's is not found. */
export async function deletePushSubscription(db: Db, userId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('push_subscriptions').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
