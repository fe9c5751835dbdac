import type { Context } from 'hono';
import type { AuditActor } from '../db/audit-log.ts';
import type { AppEnv } from './app-env.ts';
import { clientAddress } from './client-address.ts';

/** The caller of a request, as the audit log records it: its key or OAuth client, user, account, mode and address. */
export function auditActor(c: Context<AppEnv>): AuditActor {
  const { credential, scope } = c.get('principal');
  return {
    kind: credential.kind === 'oauth_token' ? 'oauth_client' : credential.kind,
    accountId: scope.accountId,
    mode: scope.mode,
    userId: scope.userId,
    apiKeyId: credential.kind === 'api_key' ? credential.id : null,
    oauthClientId: credential.kind === 'oauth_token' ? credential.clientId : null,
    remoteAddress: clientAddress(c),
  };
}
