import { insertApiKey } from '../../db/api-keys.ts';
import { recordAudit, type AuditActor } from '../../db/audit-log.ts';
import { creationAudit } from '../../db/credential-audit.ts';
import type { CredentialKind } from '../../db/credential-kinds.ts';
import { credentialRecord, type CredentialRecord } from '../../db/credentials.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import type { MintingCredential } from '../../db/minted-credentials.ts';
import { insertOauthClient } from '../../db/oauth-clients.ts';
import type { DeviceMode } from '../../db/schema.ts';
import { beyondRole } from '../../domain/access/roles.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { issueApiKey } from './api-key-token.ts';
import { issueClientCredentials } from './oauth-credentials.ts';

/** A credential to make for a user: what it may hand on (already checked), how long it lives, who minted it. */
export interface CredentialRequest {
  userId: number;
  mode: DeviceMode;
  name: string | null;
  /** A key's permissions, a client's scopes. */
  grants: string[];
  expiresAt: Date | null;
  /** The credential minting it through the API; absent when the operator makes it. */
  parent?: MintingCredential;
}

/** A credential just made, with its secret: the whole API key or the client's secret, shown only now. */
export interface MintedCredential {
  record: CredentialRecord;
  secret: string;
}

/** Each kind's secret, issued and stored as a hash: all that differs between minting a key and a client. */
const ISSUE: Record<CredentialKind, (db: Db, r: CredentialRequest) => Promise<{ id: number; secret: string }>> = {
  api_key: async (db, r) => {
    const issued = issueApiKey(r.mode);
    const key = await insertApiKey(db, {
      userId: r.userId, name: r.name, prefix: issued.prefix, keyHash: issued.hash, mode: r.mode, permissions: r.grants, expiresAt: r.expiresAt, parent: r.parent,
    });
    return { id: key.id, secret: issued.key };
  },
  oauth_client: async (db, r) => {
    const issued = issueClientCredentials();
    const client = await insertOauthClient(db, {
      clientId: issued.clientId, secretHash: issued.secretHash, userId: r.userId, mode: r.mode, name: r.name, scopes: r.grants, expiresAt: r.expiresAt, parent: r.parent,
    });
    return { id: client.id, secret: issued.secret };
  },
};

/**
 * Makes an API key or an OAuth client, never beyond its user's current role, and records who did, in one transaction: `POST /api-keys`,
 * `POST /oauth-clients` and the operator's `fleet key create`, `fleet oauth-client create` alike.
 */
export async function mintCredential(db: Db, kind: CredentialKind, request: CredentialRequest, actor: AuditActor): Promise<MintedCredential> {
  return inTransaction(db, async (trx) => {
    // The user's role, locked until the credential is made, so a role lowered meanwhile is not outrun.
    const user = await trx.selectFrom('users').select('role').where('id', '=', request.userId).where('removed_at', 'is', null).forShare().executeTakeFirst();
    if (!user) throw new DomainError('not_found', `user ${request.userId} does not exist`);
    const overRole = beyondRole(user.role, request.grants);
    if (overRole.length > 0) {
      throw new DomainError('forbidden', `A credential cannot grant more than its user's role: the ${user.role} role does not grant ${overRole.join(', ')}`);
    }
    const { id, secret } = await ISSUE[kind](trx, request);
    const record = (await credentialRecord(trx, kind, id))!;
    await recordAudit(trx, actor, creationAudit(kind, record));
    return { record, secret };
  });
}
