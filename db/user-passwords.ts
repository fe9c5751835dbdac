import { sql } from 'kysely';
import type { Db } from './database.ts';

/** The user's password hash, or null when the user has none (or does not exist). */
export async function passwordHashOf(db: Db, userId: number): Promise<string | null> {
  const row = await db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst();
  return row?.password_hash ?? null;
}

/** The user an email names, with its password hash, for signing in. */
export async function signInCandidate(db: Db, email: string): Promise<{ id: number; password_hash: string | null } | undefined> {
  return db.selectFrom('users').select(['id', 'password_hash']).where('email', '=', email.trim().toLowerCase()).where('removed_at', 'is', null).executeTakeFirst();
}

export async function setPasswordHash(db: Db, userId: number, hash: string): Promise<void> {
  await db.updateTable('users').set({ password_hash: hash, password_changed_at: new Date() }).where('id', '=', userId).execute();
}

/** Stores a one-time token's hash for the user; the user's expired tokens are swept on the way. */
export async function insertSignInToken(db: Db, tokenHash: string, userId: number, expiresAt: Date): Promise<void> {
  await sql`DELETE FROM sign_in_tokens WHERE expires_at < now()`.execute(db);
  await db.insertInto('sign_in_tokens').values({ token_hash: tokenHash, user_id: userId, expires_at: expiresAt }).execute();
}

/**
 * Uses up an unexpired one-time token, returning its user; undefined when there is no such token
 * (never made, expired or already used). One statement deletes and reads it, so it works once.
 */
export async function consumeSignInToken(db: Db, tokenHash: string): Promise<number | undefined> {
  const row = await db
    .deleteFrom('sign_in_tokens')
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', new Date())
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id;
}
