import { sql } from 'kysely';
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
  kind: 'api_key' | 'oauth_client';
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
 * Revokes everything the given credentials minted, and what those minted, down the whole tree, with
 * the tokens of every OAuth client among them; inside the caller's transaction, beside the revocation
 * of the roots. What was already revoked is left as it is (its own descendants went with it).
 */
export async function revokeMinted(db: Db, roots: { apiKeyIds?: number[]; oauthClientIds?: number[] }): Promise<CascadedRevocation[]> {
  const revoked: CascadedRevocation[] = [];
  let keyIds = roots.apiKeyIds ?? [];
  let clientIds = roots.oauthClientIds ?? [];
  for (let depth = 0; depth < MAX_DEPTH && (keyIds.length > 0 || clientIds.length > 0); depth++) {
    const { rows: keys } = await sql<{ id: number; prefix: string; user_id: number; mode: DeviceMode; parent_api_key_id: number | null; parent_oauth_client_id: number | null }>`
      UPDATE api_keys SET revoked_at = now()
      WHERE revoked_at IS NULL AND (parent_api_key_id = ANY(${keyIds}::int[]) OR parent_oauth_client_id = ANY(${clientIds}::int[]))
      RETURNING id, prefix, user_id, mode, parent_api_key_id, parent_oauth_client_id`.execute(db);
    const { rows: clients } = await sql<{ id: number; client_id: string; user_id: number; mode: DeviceMode; parent_api_key_id: number | null; parent_oauth_client_id: number | null }>`
      UPDATE oauth_clients SET revoked_at = now()
      WHERE revoked_at IS NULL AND (parent_api_key_id = ANY(${keyIds}::int[]) OR parent_oauth_client_id = ANY(${clientIds}::int[]))
      RETURNING id, client_id, user_id, mode, parent_api_key_id, parent_oauth_client_id`.execute(db);
    if (clients.length > 0) {
      await sql`UPDATE oauth_tokens SET revoked_at = now() WHERE client_id = ANY(${clients.map((c) => c.id)}::int[]) AND revoked_at IS NULL`.execute(db);
    }
    const parent = (r: { parent_api_key_id: number | null; parent_oauth_client_id: number | null }): MintingCredential =>
      r.parent_api_key_id !== null ? { apiKeyId: r.parent_api_key_id } : { oauthClientId: r.parent_oauth_client_id! };
    for (const k of keys) revoked.push({ kind: 'api_key', id: k.id, label: k.prefix, userId: k.user_id, mode: k.mode, parent: parent(k) });
    for (const c of clients) revoked.push({ kind: 'oauth_client', id: c.id, label: c.client_id, userId: c.user_id, mode: c.mode, parent: parent(c) });
    keyIds = keys.map((k) => k.id);
    clientIds = clients.map((c) => c.id);
  }
  return revoked;
}

/** The audit entries of a cascade: each credential revoked with the one that minted it, named. */
export function cascadeAuditEntries(cascaded: readonly CascadedRevocation[]) {
  return cascaded.map((r) => ({
    action: `${r.kind}.revoked`,
    targetType: r.kind,
    targetId: String(r.id),
    details: {
      ...(r.kind === 'api_key' ? { prefix: r.label } : { clientId: r.label }),
      revokedWith: 'apiKeyId' in r.parent ? { apiKeyId: r.parent.apiKeyId } : { oauthClientId: r.parent.oauthClientId },
    },
  }));
}
