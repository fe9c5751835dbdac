import { sql } from 'kysely';
import type { Db } from './database.ts';

/** What a stream token was made with: an API key, or an OAuth access token. */
export type StreamCredential = { apiKeyId: number } | { oauthTokenId: string };

/** Stores a stream token's hash for a credential until `expiresAt`; expired tokens of any credential are swept on the way. */
export async function insertStreamToken(db: Db, tokenHash: string, credential: StreamCredential, expiresAt: Date): Promise<void> {
  await sql`DELETE FROM stream_tokens WHERE expires_at < now() - interval '1 minute'`.execute(db);
  await db
    .insertInto('stream_tokens')
    .values({
      token_hash: tokenHash,
      api_key_id: 'apiKeyId' in credential ? credential.apiKeyId : null,
      oauth_token_id: 'oauthTokenId' in credential ? credential.oauthTokenId : null,
      expires_at: expiresAt,
    })
    .execute();
}

/**
 * Uses up an unexpired stream token, returning the credential it was made with; undefined when there is
 * no such token (never made, expired, or already used). One statement deletes it and reads it, so of
 * two requests presenting the same token at once, only one gets the credential.
 */
export async function consumeStreamToken(db: Db, tokenHash: string): Promise<StreamCredential | undefined> {
  const row = await db
    .deleteFrom('stream_tokens')
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', new Date())
    .returning(['api_key_id', sql<string | null>`oauth_token_id::text`.as('oauth_token_id')])
    .executeTakeFirst();
  if (!row) return undefined;
  return row.api_key_id !== null ? { apiKeyId: row.api_key_id } : { oauthTokenId: row.oauth_token_id! };
}
