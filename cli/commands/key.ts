import { ALL_PERMISSIONS, parsePermissions } from '../../domain/access/permissions.ts';
import { credentialName } from '../../db/credential-kinds.ts';
import { UsageError } from '../usage-error.ts';
import { credentialCommand, credentialCount } from './credential-command.ts';

export const keyUsage = [
  'fleet key create --user ID|EMAIL [--mode live|test] [--expires 30d|2025-12-31T00:00Z] [--permissions LIST] [--name NAME] [--json]',
  'fleet key revoke ID|PREFIX [--json]',
].join('\n       ');

export const keyCommand = credentialCommand({
  kind: 'api_key',
  name: 'key',
  usage: keyUsage,
  grantsOption: 'permissions',
  parseGrants(raw) {
    try {
      return parsePermissions(raw ?? ALL_PERMISSIONS);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  },
  reference: 'ID|PREFIX',
  created: ({ record: k, secret }) => ({
    json: { id: k.id, key: secret, prefix: k.label, userId: k.user_id, mode: k.mode, permissions: k.grants, expiresAt: k.expires_at?.toISOString() ?? null },
    text: [
      `API key ${k.id} (${k.mode}) for user ${k.user_id}; permissions ${k.grants.join(', ')}${k.expires_at ? `; expires ${k.expires_at.toISOString()}` : ''}`,
      '',
      `  ${secret}`,
      '',
      'Store it now: it is shown only once (only its hash is kept).',
    ],
  }),
  revoked: ({ record: k, minted }) => ({
    json: { id: k.id, prefix: k.label, revokedAt: k.revoked_at?.toISOString(), mintedRevoked: minted.length },
    text: `${credentialName('api_key', k.id, k.label)} revoked${minted.length > 0 ? `, with the ${credentialCount(minted.length)} it minted` : ''}`,
  }),
});
