import { sql } from 'kysely';
import type { Db } from './database.ts';

/** Stores an access token's hash for a client, with the scopes it grants, until `expiresAt`. */
export async function insertOauthToken(db: Db, token: { tokenHash: string; clientId: number; scopes: string[]; expiresAt: Date }): Promise<string> {
  const row = await db
    .insertInto('oauth_tokens')
    .values({ token_hash: token.tokenHash, client_id: token.clientId, scopes: token.scopes, expires_at: token.expiresAt })
    .returning(sql<string>`id::text`.as('id'))
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * The token behind a presented hash with its client and the client's user: everything a request
 * needs to act as it, and to say why it may not (revoked, expired, its client revoked).
 */
export async function findOauthToken(db: Db, by: { hash: string } | { id: string }) {
  return db
    .selectFrom('oauth_tokens as t')
    .innerJoin('oauth_clients as c', 'c.id', 't.client_id')
    .innerJoin('users as u', 'u.id', 'c.user_id')
    .select([
      sql<string>`t.id::text`.as('id'), 't.scopes', 't.expires_at', 't.revoked_at', 't.created_at', 't.client_id',
      'c.client_id as public_client_id', 'c.revoked_at as client_revoked_at', 'c.mode', 'c.user_id', 'u.account_id', 'u.timezone', 'u.role',
    ])
    .$if('hash' in by, (q) => q.where('t.token_hash', '=', (by as { hash: string }).hash))
    .$if('id' in by, (q) => q.where(sql`t.id`, '=', sql`${(by as { id: string }).id}::bigint`))
    .executeTakeFirst();
}

export type OauthTokenRow = NonNullable<Awaited<ReturnType<typeof findOauthToken>>>;

/** RFC 7009: revokes the token if it belongs to the client; anything else changes nothing. */
export async function revokeOauthToken(db: Db, tokenHash: string, clientId: number): Promise<void> {
  await db
    .updateTable('oauth_tokens')
    .set({ revoked_at: sql`now()` })
    .where('token_hash', '=', tokenHash)
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Tokens that expired before `olderThan` are of no use to anyone: deleted, in batches. */
export async function pruneOauthTokens(db: Db, olderThan: Date, limit = 10_000): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM oauth_tokens WHERE id IN (SELECT id FROM oauth_tokens WHERE expires_at < ${olderThan} LIMIT ${limit}) RETURNING 1
    ) SELECT count(*)::int AS n FROM gone`.execute(db);
  return rows[0]?.n ?? 0;
}
