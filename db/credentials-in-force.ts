import { sql } from 'kysely';
import type { Db } from './database.ts';

export interface CredentialIds {
  apiKeyIds: number[];
  /** Access token ids (bigint, as text). */
  oauthTokenIds: string[];
}

/**
 * Which of these API keys and OAuth access tokens still work: not revoked, not expired, and for a
 * token, its client not revoked either. Open event streams ask this of their credentials every second
 * or so, wherever the revocation was made (the API, `fleet key revoke`, another process).
 */
export async function credentialsInForce(db: Db, ids: CredentialIds): Promise<{ apiKeyIds: Set<number>; oauthTokenIds: Set<string> }> {
  const keys = ids.apiKeyIds.length === 0
    ? []
    : await db
        .selectFrom('api_keys')
        .select('id')
        .where('id', 'in', ids.apiKeyIds)
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
        .execute();
  const tokens = ids.oauthTokenIds.length === 0
    ? []
    : await db
        .selectFrom('oauth_tokens as t')
        .innerJoin('oauth_clients as c', 'c.id', 't.client_id')
        .select(sql<string>`t.id::text`.as('id'))
        .where(sql<boolean>`t.id IN (${sql.join(ids.oauthTokenIds.map((id) => sql`${id}::bigint`))})`)
        .where('t.revoked_at', 'is', null)
        .where('c.revoked_at', 'is', null)
        .where('t.expires_at', '>', sql<Date>`now()`)
        .execute();
  return { apiKeyIds: new Set(keys.map((k) => k.id)), oauthTokenIds: new Set(tokens.map((t) => t.id)) };
}
