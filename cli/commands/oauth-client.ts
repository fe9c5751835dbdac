import { ALL_PERMISSIONS, normalisePermissions } from '../../domain/access/permissions.ts';
import { credentialName } from '../../db/credential-kinds.ts';
import { UsageError } from '../usage-error.ts';
import { credentialCommand, credentialCount } from './credential-command.ts';

export const oauthClientUsage = [
  'fleet oauth-client create --user ID|EMAIL --scopes LIST [--mode live|test] [--expires 30d|ISO] [--name NAME] [--json]',
  'fleet oauth-client revoke ID|CLIENT_ID [--json]',
].join('\n       ');

export const oauthClientCommand = credentialCommand({
  kind: 'oauth_client',
  name: 'oauth-client',
  usage: oauthClientUsage,
  grantsOption: 'scopes',
  parseGrants(raw) {
    try {
      // Scopes are permission names; as for keys, `*` leaves commands:write and keys:write to be named.
      return normalisePermissions((raw ?? '').split(/[ ,]+/), 'scope');
    } catch (error) {
      throw new UsageError(`--scopes: ${(error as Error).message} (e.g. --scopes vehicles:read,events:read, or ${ALL_PERMISSIONS})`);
    }
  },
  reference: 'ID|CLIENT_ID',
  created: ({ record: c, secret }) => ({
    json: { id: c.id, clientId: c.label, clientSecret: secret, userId: c.user_id, mode: c.mode, scopes: c.grants, expiresAt: c.expires_at?.toISOString() ?? null },
    text: [
      `OAuth client ${c.id} (${c.mode}) for user ${c.user_id}; scopes ${c.grants.join(' ')}${c.expires_at ? `; expires ${c.expires_at.toISOString()}` : ''}`,
      '',
      `  client_id:     ${c.label}`,
      `  client_secret: ${secret}`,
      '',
      'Store the secret now: it is shown only once (only its hash is kept). Tokens: POST /oauth/token with grant_type=client_credentials.',
    ],
  }),
  revoked: ({ record: c, minted }) => ({
    json: { id: c.id, clientId: c.label, revokedAt: c.revoked_at?.toISOString(), mintedRevoked: minted.length },
    text: `${credentialName('oauth_client', c.id, c.label)} and its tokens revoked${minted.length > 0 ? `, with the ${credentialCount(minted.length)} minted through it` : ''}`,
  }),
});
