import type { AuditEntry } from './audit-log.ts';
import { CREDENTIAL_KINDS, type CredentialKind } from './credential-kinds.ts';
import type { CredentialRecord, Revocation } from './credentials.ts';
import type { CascadedRevocation } from './minted-credentials.ts';

/**
 * The audit log's entries for a credential's life, the same whoever acts (a key, an OAuth client,
 * the operator's `fleet`): `api_key.created`, `oauth_client.revoked`, … naming it by its label.
 */
export function creationAudit(kind: CredentialKind, record: CredentialRecord): AuditEntry {
  const { labelName, grantsName } = CREDENTIAL_KINDS[kind];
  return {
    action: `${kind}.created`, targetType: kind, targetId: String(record.id),
    details: { [labelName]: record.label, name: record.name, [grantsName]: record.grants, expiresAt: record.expires_at?.toISOString() ?? null },
  };
}

/** A revocation's entries: the credential's own, then one per credential revoked with it, naming the one that minted it. */
export function revocationAudit(kind: CredentialKind, { record, minted }: Pick<Revocation, 'record' | 'minted'>): AuditEntry[] {
  const own = { action: `${kind}.revoked`, targetType: kind, targetId: String(record.id), details: { [CREDENTIAL_KINDS[kind].labelName]: record.label } };
  return [own, ...minted.map(cascadeEntry)];
}

function cascadeEntry(r: CascadedRevocation): AuditEntry {
  return {
    action: `${r.kind}.revoked`,
    targetType: r.kind,
    targetId: String(r.id),
    details: {
      [CREDENTIAL_KINDS[r.kind].labelName]: r.label,
      revokedWith: 'apiKeyId' in r.parent ? { apiKeyId: r.parent.apiKeyId } : { oauthClientId: r.parent.oauthClientId },
    },
  };
}
