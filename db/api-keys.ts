import { sql } from 'kysely';
import type { Db } from './database.ts';
import type { ApiKey, DeviceMode } from './schema.ts';

export interface NewApiKey {
  userId: number;
  name?: string | null;
  prefix: string;
  keyHash: string;
  mode: DeviceMode;
  permissions: string[];
  expiresAt?: Date | null;
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
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The key behind a presented hash, with its user; revoked and expired keys included, so callers can say which. */
export async function findKeyByHash(db: Db, keyHash: string) {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .select([
      'k.id',
      'k.mode',
      'k.permissions',
      'k.expires_at',
      'k.revoked_at',
      'k.user_id',
      'u.account_id',
      'u.timezone',
    ])
    .where('k.key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** Revokes by id or by clear prefix; returns the revoked key, or undefined when none matched. */
export async function revokeApiKey(db: Db, idOrPrefix: string): Promise<ApiKey | undefined> {
  const query = db.updateTable('api_keys').set({ revoked_at: sql`now()` }).where('revoked_at', 'is', null);
  const matched = /^\d+$/.test(idOrPrefix)
    ? query.where('id', '=', Number(idOrPrefix))
    : query.where('prefix', '=', idOrPrefix);
  return matched.returningAll().executeTakeFirst();
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
