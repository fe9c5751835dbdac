import { revokeCredential, type CredentialRecord } from './credentials.ts';
import type { Db } from './database.ts';
import { parentColumns, type CascadedRevocation, type MintingCredential } from './minted-credentials.ts';
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
 * The keys sharing a clear prefix, with their users (their role read with the key, so a changed role
 * holds on the key's next lookup): the caller compares each stored hash with the
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
    .select(['k.id', 'k.key_hash', 'k.mode', 'k.permissions', 'k.expires_at', 'k.revoked_at', 'k.user_id', 'u.account_id', 'u.timezone', 'u.role']);
}

export type KeyRow = Awaited<ReturnType<typeof findKeysByPrefix>>[number];

/**
 * The operator's revocation of one key, named by id or by its clear prefix (revokeCredential says
 * how a prefix several keys share is refused); what it minted through the API goes with it (`minted`).
 */
export async function revokeApiKey(db: Db, idOrPrefix: string): Promise<{ key: CredentialRecord; minted: CascadedRevocation[] }> {
  const { record, minted } = await revokeCredential(db, 'api_key', idOrPrefix);
  return { key: record, minted };
}
