import { sql } from 'kysely';
import type { Db } from './database.ts';
import { DomainError } from './domain-error.ts';
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

/**
 * Revokes one key, named by id or by its clear prefix. Prefixes are not unique, so a prefix that
 * matches several active keys revokes none and names them (revoke by id then); a key already revoked
 * is said to be so. Each refusal is a DomainError whose message is one line.
 */
export async function revokeApiKey(db: Db, idOrPrefix: string): Promise<ApiKey> {
  const byId = /^\d+$/.test(idOrPrefix);
  const matches = await db
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .select(['k.id', 'k.prefix', 'k.name', 'k.created_at', 'k.revoked_at', 'u.email'])
    .$if(byId, (q) => q.where('k.id', '=', Number(idOrPrefix)))
    .$if(!byId, (q) => q.where('k.prefix', '=', idOrPrefix))
    .orderBy('k.id')
    .execute();
  if (matches.length === 0) throw new DomainError('not_found', `no API key matches "${idOrPrefix}"`);
  const active = matches.filter((k) => k.revoked_at === null);
  if (active.length === 0) {
    const [first] = matches;
    throw new DomainError('conflict', `API key ${first!.id} (${first!.prefix}…) is already revoked, since ${first!.revoked_at!.toISOString()}`);
  }
  if (active.length > 1) {
    const listed = active.map((k) => `${k.id} (user ${k.email}${k.name ? `, "${k.name}"` : ''}, created ${k.created_at.toISOString()})`);
    throw new DomainError('conflict', `prefix "${idOrPrefix}" matches ${active.length} active keys, so none was revoked; revoke one by id: ${listed.join('; ')}`);
  }
  return db
    .updateTable('api_keys')
    .set({ revoked_at: sql`now()` })
    .where('id', '=', active[0]!.id)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirstOrThrow();
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
