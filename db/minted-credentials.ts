import { sql } from 'kysely';
import { CREDENTIAL_KIND_NAMES, CREDENTIAL_KINDS, type CredentialKind } from './credential-kinds.ts';
import type { Db } from './database.ts';
import type { DeviceMode } from './schema.ts';

/** The credential that minted another through the API: an API key, or an OAuth client through one of its tokens. */
export type MintingCredential = { apiKeyId: number } | { oauthClientId: number };

/** The parent columns of a credential minted by `parent` (both null when the operator made it). */
export function parentColumns(parent: MintingCredential | undefined) {
  return {
    parent_api_key_id: parent && 'apiKeyId' in parent ? parent.apiKeyId : null,
    parent_oauth_client_id: parent && 'oauthClientId' in parent ? parent.oauthClientId : null,
  };
}

/** A credential revoked because the one that minted it (or an ancestor of it) was. */
export interface CascadedRevocation {
  kind: CredentialKind;
  id: number;
  /** The key's prefix or the client's public id, for the audit log. */
  label: string;
  userId: number;
  mode: DeviceMode;
  parent: MintingCredential;
}

// Deeper than any chain of minting a person would build; a bound so a cycle could never loop.
const MAX_DEPTH = 64;

/**
 * What goes with a revoked credential: its tokens when it is an OAuth client, everything it minted,
 * and what those minted, down the whole tree, with the tokens of every OAuth client among them;
 * inside the caller's transaction, beside the revocation of the root. What was already revoked is
 * left as it is (its own descendants went with it).
 */
export async function revokeMinted(db: Db, root: { kind: CredentialKind; id: number }): Promise<CascadedRevocation[]> {
  const revoked: CascadedRevocation[] = [];
  let keyIds = root.kind === 'api_key' ? [root.id] : [];
  let clientIds = root.kind === 'oauth_client' ? [root.id] : [];
  await revokeTokens(db, clientIds);
  for (let depth = 0; depth < MAX_DEPTH && (keyIds.length > 0 || clientIds.length > 0); depth++) {
    const level: CascadedRevocation[] = [];
    for (const kind of CREDENTIAL_KIND_NAMES) {
      const { table, label } = CREDENTIAL_KINDS[kind];
      const { rows } = await sql<{ id: number; label: string; user_id: number; mode: DeviceMode; parent_api_key_id: number | null; parent_oauth_client_id: number | null }>`
        UPDATE ${sql.table(table)} SET revoked_at = now()
        WHERE revoked_at IS NULL AND (parent_api_key_id = ANY(${keyIds}::int[]) OR parent_oauth_client_id = ANY(${clientIds}::int[]))
        RETURNING id, ${sql.ref(label)} AS label, user_id, mode, parent_api_key_id, parent_oauth_client_id`.execute(db);
      for (const r of rows) level.push({ kind, id: r.id, label: r.label, userId: r.user_id, mode: r.mode, parent: parentOf(r) });
    }
    keyIds = level.filter((r) => r.kind === 'api_key').map((r) => r.id);
    clientIds = level.filter((r) => r.kind === 'oauth_client').map((r) => r.id);
    await revokeTokens(db, clientIds);
    revoked.push(...level);
  }
  return revoked;
}

const parentOf = (r: { parent_api_key_id: number | null; parent_oauth_client_id: number | null }): MintingCredential =>
  r.parent_api_key_id !== null ? { apiKeyId: r.parent_api_key_id } : { oauthClientId: r.parent_oauth_client_id! };

async function revokeTokens(db: Db, clientIds: number[]): Promise<void> {
  if (clientIds.length === 0) return;
  await sql`UPDATE oauth_tokens SET revoked_at = now() WHERE client_id = ANY(${clientIds}::int[]) AND revoked_at IS NULL`.execute(db);
}
