import { sql } from 'kysely';
import type { AccessScope } from './access-scope.ts';
import { inTransaction, type Db } from './database.ts';
import { parentColumns, revokeMinted, type CascadedRevocation, type MintingCredential } from './minted-credentials.ts';
import type { DeviceMode } from './schema.ts';

export interface NewOauthClient {
  clientId: string;
  secretHash: string;
  userId: number;
  mode: DeviceMode;
  name: string | null;
  scopes: string[];
  expiresAt: Date | null;
  /** The credential minting it through the API; absent when the operator makes it. */
  parent?: MintingCredential;
}

const RECORD = [
  'c.id', 'c.client_id', 'c.user_id', 'c.mode', 'c.name', 'c.scopes', 'c.expires_at', 'c.revoked_at', 'c.last_used_at', 'c.created_at',
  'c.parent_api_key_id', 'c.parent_oauth_client_id',
] as const;

export async function insertOauthClient(db: Db, client: NewOauthClient) {
  const row = await db
    .insertInto('oauth_clients')
    .values({
      client_id: client.clientId, secret_hash: client.secretHash, user_id: client.userId, mode: client.mode,
      name: client.name, scopes: client.scopes, expires_at: client.expiresAt, ...parentColumns(client.parent),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return (await db.selectFrom('oauth_clients as c').select(RECORD).where('c.id', '=', row.id).executeTakeFirstOrThrow());
}

export type OauthClientRecord = Awaited<ReturnType<typeof insertOauthClient>>;

/** A client by its public id, with its secret's hash and its user's account and timezone: what the token endpoint checks. */
export async function findOauthClient(db: Db, clientId: string) {
  return db
    .selectFrom('oauth_clients as c')
    .innerJoin('users as u', 'u.id', 'c.user_id')
    .select([...RECORD, 'c.secret_hash', 'u.account_id', 'u.timezone'])
    .where('c.client_id', '=', clientId)
    .executeTakeFirst();
}

export type OauthClientRow = NonNullable<Awaited<ReturnType<typeof findOauthClient>>>;

/** The user's clients of the scope's mode, by id, after `afterId`; `limit + 1` rows so the caller can tell whether more follow. */
export async function oauthClientPage(db: Db, scope: AccessScope, afterId: number | undefined, limit: number): Promise<OauthClientRecord[]> {
  return db
    .selectFrom('oauth_clients as c')
    .select(RECORD)
    .where('c.user_id', '=', scope.userId)
    .where('c.mode', '=', scope.mode)
    .$if(afterId !== undefined, (q) => q.where('c.id', '>', afterId!))
    .orderBy('c.id')
    .limit(limit + 1)
    .execute();
}

/**
 * Revokes a client of the scope's user and mode, every token it was issued, and what its tokens minted
 * (`minted`), at once. Undefined when there is no such client; a client already revoked is returned as
 * it is (`revokedNow: false`).
 */
export async function revokeOauthClient(
  db: Db, scope: AccessScope, id: number,
): Promise<{ client: OauthClientRecord; revokedNow: boolean; minted: CascadedRevocation[] } | undefined> {
  return inTransaction(db, async (trx) => {
    const found = await trx
      .selectFrom('oauth_clients as c').select(RECORD)
      .where('c.id', '=', id).where('c.user_id', '=', scope.userId).where('c.mode', '=', scope.mode)
      .forUpdate()
      .executeTakeFirst();
    if (!found || found.revoked_at) return found && { client: found, revokedNow: false, minted: [] };
    await trx.updateTable('oauth_clients').set({ revoked_at: sql`now()` }).where('id', '=', id).execute();
    await trx.updateTable('oauth_tokens').set({ revoked_at: sql`now()` }).where('client_id', '=', id).where('revoked_at', 'is', null).execute();
    const minted = await revokeMinted(trx, { oauthClientIds: [id] });
    return { client: await trx.selectFrom('oauth_clients as c').select(RECORD).where('c.id', '=', id).executeTakeFirstOrThrow(), revokedNow: true, minted };
  });
}

/** Records use at most once a minute per client. */
export async function touchOauthClient(db: Db, id: number): Promise<void> {
  await db
    .updateTable('oauth_clients')
    .set({ last_used_at: sql`now()` })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]))
    .execute();
}
