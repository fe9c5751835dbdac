import { sql } from 'kysely';
import type { Db } from './database.ts';

/** Stores a stream token's hash for a key until `expiresAt`; expired tokens of any key are swept on the way. */
export async function insertStreamToken(db: Db, tokenHash: string, apiKeyId: number, expiresAt: Date): Promise<void> {
  await sql`DELETE FROM stream_tokens WHERE expires_at < now() - interval '1 minute'`.execute(db);
  await db.insertInto('stream_tokens').values({ token_hash: tokenHash, api_key_id: apiKeyId, expires_at: expiresAt }).execute();
}

/** The key behind an unexpired stream token, with its user, as findKeyByHash returns it; undefined otherwise. */
export async function findKeyByStreamToken(db: Db, tokenHash: string) {
  return db
    .selectFrom('stream_tokens as t')
    .innerJoin('api_keys as k', 'k.id', 't.api_key_id')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .select(['k.id', 'k.key_hash', 'k.mode', 'k.permissions', 'k.expires_at', 'k.revoked_at', 'k.user_id', 'u.account_id', 'u.timezone'])
    .where('t.token_hash', '=', tokenHash)
    .where('t.expires_at', '>', new Date())
    .executeTakeFirst();
}
