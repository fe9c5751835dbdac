import { sql } from 'kysely';
import { inTransaction, type Db } from './database.ts';
import { DomainError } from '../domain/domain-error.ts';
import type { AccessScope } from './access-scope.ts';
import { parentColumns, revokeMinted, type CascadedRevocation, type MintingCredential } from './minted-credentials.ts';
import type { ApiKey, DeviceMode } from './schema.ts';

export interface NewApiKey {
  userId: number;
  name?: string | null;
  prefix: string;
  keyHash: string;
  mode: DeviceMode;
  permissions: string[];
  expiresAt?: Date | null;
  /** The credential minting it through the API; absent when the operator makes it. */
  parent?: MintingCredential;
}

export async function insertApiKey(db: Db, key: NewApiKey): Promise<ApiKey> {
  return db
    .insertInto('api_keys')
    .values({
      user_id: key.userId,
      name: key.name ?? null,
      prefix: key.prefix,
      key_hash: key.keyHash,
      mode: key.mode,
      permissions: key.permissions,
      expires_at: key.expiresAt ?? null,
      ...parentColumns(key.parent),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The keys sharing a clear prefix, with their users: the caller compares each stored hash with the
 * presented key's in constant time. Revoked and expired keys included, so callers can say which.
 */
export async function findKeysByPrefix(db: Db, prefix: string) {
  return keysWithUsers(db).where('k.prefix', '=', prefix).limit(50).execute();
}

/** One key by id with its user, as findKeysByPrefix returns them (a stream token names its key so). */
export async function findKeyById(db: Db, id: number) {
  return keysWithUsers(db).where('k.id', '=', id).executeTakeFirst();
}

function keysWithUsers(db: Db) {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .select(['k.id', 'k.key_hash', 'k.mode', 'k.permissions', 'k.expires_at', 'k.revoked_at', 'k.user_id', 'u.account_id', 'u.timezone']);
}

export type KeyRow = Awaited<ReturnType<typeof findKeysByPrefix>>[number];

// Ids are PostgreSQL integers: a longer number names no key rather than failing the query.
const MAX_KEY_ID = 2_147_483_647;

/**
 * Revokes one key, named by id or by its clear prefix. Prefixes are not unique, so a prefix that
 * several keys share revokes none and lists them (revoke by id then); revoked keys count too, since
 * the operator may have meant one of those and must not lose another user's key instead. A key
 * already revoked is said to be so. Each refusal is a DomainError whose message is one line. What the
 * key minted through the API is revoked with it (`minted`).
 */
export async function revokeApiKey(db: Db, idOrPrefix: string): Promise<{ key: ApiKey; minted: CascadedRevocation[] }> {
  const byId = /^\d+$/.test(idOrPrefix);
  if (byId && Number(idOrPrefix) > MAX_KEY_ID) throw new DomainError('not_found', `no API key matches "${idOrPrefix}"`);
  return inTransaction(db, async (trx) => {
    // Locked, so a revocation running at the same time is seen here as already revoked.
    const matches = await trx
      .selectFrom('api_keys as k')
      .innerJoin('users as u', 'u.id', 'k.user_id')
      .select(['k.id', 'k.prefix', 'k.name', 'k.created_at', 'k.revoked_at', 'u.email'])
      .$if(byId, (q) => q.where('k.id', '=', Number(idOrPrefix)))
      .$if(!byId, (q) => q.where('k.prefix', '=', idOrPrefix))
      .orderBy('k.id')
      .forUpdate('k')
      .execute();
    if (matches.length === 0) throw new DomainError('not_found', `no API key matches "${idOrPrefix}"`);
    const [only] = matches;
    if (matches.every((k) => k.revoked_at !== null)) {
      if (matches.length === 1) throw new DomainError('conflict', `API key ${only!.id} (${only!.prefix}…) is already revoked, since ${only!.revoked_at!.toISOString()}`);
      const listed = matches.map((k) => `${k.id} (since ${k.revoked_at!.toISOString()})`);
      throw new DomainError('conflict', `the ${matches.length} API keys with prefix "${idOrPrefix}" are already revoked: ${listed.join('; ')}`);
    }
    if (matches.length > 1) {
      const listed = matches.map(
        (k) => `${k.id} (user ${k.email}${k.name ? `, "${k.name}"` : ''}, created ${k.created_at.toISOString()}${k.revoked_at ? `, revoked ${k.revoked_at.toISOString()}` : ''})`,
      );
      throw new DomainError('conflict', `prefix "${idOrPrefix}" matches ${matches.length} keys, so none was revoked; revoke one by id: ${listed.join('; ')}`);
    }
    const key = await trx.updateTable('api_keys').set({ revoked_at: sql`now()` }).where('id', '=', only!.id).returningAll().executeTakeFirstOrThrow();
    return { key, minted: await revokeMinted(trx, { apiKeyIds: [key.id] }) };
  });
}

/** Records use at most once a minute per key, so authentication does not write on every request. */
export async function touchApiKey(db: Db, id: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: sql`now()` })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]))
    .execute();
}

const RECORD = ['id', 'name', 'prefix', 'mode', 'permissions', 'expires_at', 'revoked_at', 'last_used_at', 'created_at', 'parent_api_key_id', 'parent_oauth_client_id'] as const;

/** The user's keys of the scope's mode by id, after `afterId`; `limit + 1` rows. Never the hashes. */
export async function apiKeyPage(db: Db, scope: AccessScope, afterId: number | undefined, limit: number) {
  return db
    .selectFrom('api_keys')
    .select(RECORD)
    .where('user_id', '=', scope.userId)
    .where('mode', '=', scope.mode)
    .$if(afterId !== undefined, (q) => q.where('id', '>', afterId!))
    .orderBy('id')
    .limit(limit + 1)
    .execute();
}

export type ApiKeyRecord = Awaited<ReturnType<typeof apiKeyPage>>[number];

/**
 * Revokes a key of the scope's user and mode, and what it minted (`minted`); undefined when there is
 * none such. A key already revoked is returned as it is (`revokedNow: false`), so a repeated DELETE
 * answers the same. Run it in a transaction, so the key and what it minted go together.
 */
export async function revokeOwnApiKey(
  db: Db, scope: AccessScope, id: number,
): Promise<{ key: ApiKeyRecord; revokedNow: boolean; minted: CascadedRevocation[] } | undefined> {
  const revoked = await db
    .updateTable('api_keys')
    .set({ revoked_at: sql`now()` })
    .where('id', '=', id).where('user_id', '=', scope.userId).where('mode', '=', scope.mode).where('revoked_at', 'is', null)
    .returning(RECORD)
    .executeTakeFirst();
  if (revoked) return { key: revoked, revokedNow: true, minted: await revokeMinted(db, { apiKeyIds: [id] }) };
  const found = await db.selectFrom('api_keys').select(RECORD).where('id', '=', id).where('user_id', '=', scope.userId).where('mode', '=', scope.mode).executeTakeFirst();
  return found && { key: found, revokedNow: false, minted: [] };
}
