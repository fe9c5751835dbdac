import { sql } from 'kysely';
import { DomainError } from '../domain/domain-error.ts';
import type { AccessScope } from './access-scope.ts';
import { CREDENTIAL_KINDS, credentialName, type CredentialKind } from './credential-kinds.ts';
import { inTransaction, type Db } from './database.ts';
import { revokeMinted, type CascadedRevocation } from './minted-credentials.ts';
import type { DeviceMode } from './schema.ts';

/** An API key or an OAuth client as its lifecycle shows it: never its secret's hash. */
export interface CredentialRecord {
  id: number;
  user_id: number;
  name: string | null;
  mode: DeviceMode;
  /** A key's clear prefix, a client's public client_id. */
  label: string;
  /** A key's permissions, a client's scopes. */
  grants: string[];
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
  parent_api_key_id: number | null;
  parent_oauth_client_id: number | null;
}

/** A revocation: the credential as it now stands, and what was revoked with it. */
export interface Revocation {
  record: CredentialRecord;
  /** False when it had been revoked before: a repeated DELETE answers the same, and audits nothing. */
  revokedNow: boolean;
  minted: CascadedRevocation[];
}

// Ids are PostgreSQL integers: a longer number names no credential rather than failing the query.
const MAX_ID = 2_147_483_647;

function recordColumns(kind: CredentialKind) {
  const { label, grants } = CREDENTIAL_KINDS[kind];
  return [
    'id', 'user_id', 'name', 'mode', 'created_at', 'expires_at', 'last_used_at', 'revoked_at', 'parent_api_key_id', 'parent_oauth_client_id',
    sql.ref<string>(label).as('label'), sql.ref<string[]>(grants).as('grants'),
  ] as const;
}

const records = (db: Db, kind: CredentialKind) => db.selectFrom(CREDENTIAL_KINDS[kind].table).select(recordColumns(kind));

export async function credentialRecord(db: Db, kind: CredentialKind, id: number): Promise<CredentialRecord | undefined> {
  return records(db, kind).where('id', '=', id).executeTakeFirst();
}

/**
 * The user's credentials of the kind and of `modes` (the scope's mode unless given), by id, after
 * `afterId`; `limit + 1` rows so the caller can tell whether more follow.
 */
export async function credentialPage(
  db: Db, kind: CredentialKind, scope: AccessScope, afterId: number | undefined, limit: number, modes: readonly DeviceMode[] = [scope.mode],
): Promise<CredentialRecord[]> {
  return records(db, kind)
    .where('user_id', '=', scope.userId)
    .where('mode', 'in', modes)
    .$if(afterId !== undefined, (q) => q.where('id', '>', afterId!))
    .orderBy('id')
    .limit(limit + 1)
    .execute();
}

/** Records use at most once a minute per credential, so authentication does not write on every request. */
export async function touchCredential(db: Db, kind: CredentialKind, id: number): Promise<void> {
  await db
    .updateTable(CREDENTIAL_KINDS[kind].table)
    .set({ last_used_at: sql`now()` })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]))
    .execute();
}

/**
 * Revokes a credential of the scope's user and of `modes` (the scope's mode unless given) with what
 * goes with it (revokeMinted); undefined when there is none such. One already revoked is returned as
 * it is (`revokedNow: false`).
 */
export async function revokeOwnCredential(
  db: Db, kind: CredentialKind, scope: AccessScope, id: number, modes: readonly DeviceMode[] = [scope.mode],
): Promise<Revocation | undefined> {
  return inTransaction(db, async (trx) => {
    // Locked, so a revocation running at the same time is seen here as already revoked.
    const found = await records(trx, kind).where('id', '=', id).where('user_id', '=', scope.userId).where('mode', 'in', modes).forUpdate().executeTakeFirst();
    if (!found || found.revoked_at) return found && { record: found, revokedNow: false, minted: [] };
    return { ...(await revokeNow(trx, kind, id)), revokedNow: true };
  });
}

/**
 * The operator's revocation (`fleet key revoke`, `fleet oauth-client revoke`): one credential named
 * by id or by its label. A key's prefix is not unique, so a label that several share revokes none
 * and lists them (revoke by id then); revoked ones count too, since the operator may have meant one
 * of those and must not lose another user's credential instead. One already revoked is said to be
 * so. Each refusal is a DomainError whose message is one line.
 */
export async function revokeCredential(db: Db, kind: CredentialKind, ref: string): Promise<Omit<Revocation, 'revokedNow'>> {
  const { table, label, labelName, noun, shortNoun } = CREDENTIAL_KINDS[kind];
  const byId = /^\d+$/.test(ref);
  if (byId && Number(ref) > MAX_ID) throw new DomainError('not_found', `no ${noun} matches "${ref}"`);
  return inTransaction(db, async (trx) => {
    const matches = await trx
      .selectFrom(table)
      .innerJoin('users as u', 'u.id', `${table}.user_id`)
      .select([`${table}.id as id`, sql.ref<string>(`${table}.${label}`).as('label'), `${table}.name as name`, `${table}.created_at as created_at`, `${table}.revoked_at as revoked_at`, 'u.email'])
      .where(sql.ref(`${table}.${byId ? 'id' : label}`), '=', byId ? Number(ref) : ref)
      .orderBy(`${table}.id`)
      .forUpdate(table)
      .execute();
    if (matches.length === 0) throw new DomainError('not_found', `no ${noun} matches "${ref}"`);
    const [only] = matches;
    if (matches.every((c) => c.revoked_at !== null)) {
      if (matches.length === 1) throw new DomainError('conflict', `${credentialName(kind, only!.id, only!.label)} is already revoked, since ${only!.revoked_at!.toISOString()}`);
      const listed = matches.map((c) => `${c.id} (since ${c.revoked_at!.toISOString()})`);
      throw new DomainError('conflict', `the ${matches.length} ${noun}s with ${labelName} "${ref}" are already revoked: ${listed.join('; ')}`);
    }
    if (matches.length > 1) {
      const listed = matches.map(
        (c) => `${c.id} (user ${c.email}${c.name ? `, "${c.name}"` : ''}, created ${c.created_at.toISOString()}${c.revoked_at ? `, revoked ${c.revoked_at.toISOString()}` : ''})`,
      );
      throw new DomainError('conflict', `${labelName} "${ref}" matches ${matches.length} ${shortNoun}s, so none was revoked; revoke one by id: ${listed.join('; ')}`);
    }
    return revokeNow(trx, kind, only!.id);
  });
}

/** Revokes a credential its caller has locked and found in force, and what goes with it. */
async function revokeNow(trx: Db, kind: CredentialKind, id: number): Promise<Omit<Revocation, 'revokedNow'>> {
  const record = await trx.updateTable(CREDENTIAL_KINDS[kind].table).set({ revoked_at: sql`now()` }).where('id', '=', id).returning(recordColumns(kind)).executeTakeFirstOrThrow();
  return { record, minted: await revokeMinted(trx, { kind, id }) };
}
