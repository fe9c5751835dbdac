import { issueClientCredentials } from '../../api/auth/oauth-credentials.ts';
import { ALL_PERMISSIONS, normalisePermissions } from '../../domain/access/permissions.ts';
import { inTransaction } from '../../db/database.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { cascadeAuditEntries } from '../../db/minted-credentials.ts';
import { findOauthClient, insertOauthClient, revokeOauthClient } from '../../db/oauth-clients.ts';
import { findUser } from '../../db/users.ts';
import { recordCliAudit } from '../cli-audit.ts';
import { optionalString, parseCommand, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';
import { parseExpiry, parseMode } from './key.ts';

export const oauthClientUsage = [
  'fleet oauth-client create --user ID|EMAIL --scopes LIST [--mode live|test] [--expires 30d|ISO] [--name NAME] [--json]',
  'fleet oauth-client revoke ID|CLIENT_ID [--json]',
].join('\n       ');

async function create(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, { user: { type: 'string' }, scopes: { type: 'string' }, mode: { type: 'string' }, expires: { type: 'string' }, name: { type: 'string' } });
  const userRef = requiredString(parsed, 'user');
  const mode = parseMode(optionalString(parsed, 'mode'));
  const expiresRaw = optionalString(parsed, 'expires');
  const expiresAt = expiresRaw ? parseExpiry(expiresRaw) : null;
  let scopes: string[];
  try {
    // Scopes are permission names; as for keys, `*` leaves commands:write and keys:write to be named.
    scopes = normalisePermissions((optionalString(parsed, 'scopes') ?? '').split(/[ ,]+/), 'scope');
  } catch (error) {
    throw new UsageError(`--scopes: ${(error as Error).message} (e.g. --scopes vehicles:read,events:read, or ${ALL_PERMISSIONS})`);
  }
  const issued = issueClientCredentials();
  const client = await withDatabase(config, async ({ db }) => {
    const user = await findUser(db, userRef);
    if (!user) throw new DomainError('not_found', `user ${userRef} does not exist`);
    return inTransaction(db, async (trx) => {
      const row = await insertOauthClient(trx, { clientId: issued.clientId, secretHash: issued.secretHash, userId: user.id, mode, name: optionalString(parsed, 'name') ?? null, scopes, expiresAt });
      await recordCliAudit(trx, user.id, mode, {
        action: 'oauth_client.created', targetType: 'oauth_client', targetId: String(row.id),
        details: { clientId: row.client_id, name: row.name, scopes, expiresAt: expiresAt?.toISOString() ?? null },
      });
      return row;
    });
  });
  printResult(
    parsed.json,
    { id: client.id, clientId: client.client_id, clientSecret: issued.secret, userId: client.user_id, mode, scopes, expiresAt: client.expires_at?.toISOString() ?? null },
    [
      `OAuth client ${client.id} (${mode}) for user ${client.user_id}; scopes ${scopes.join(' ')}${client.expires_at ? `; expires ${client.expires_at.toISOString()}` : ''}`,
      '',
      `  client_id:     ${client.client_id}`,
      `  client_secret: ${issued.secret}`,
      '',
      'Store the secret now: it is shown only once (only its hash is kept). Tokens: POST /oauth/token with grant_type=client_credentials.',
    ],
  );
}

async function revoke(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, {}, true);
  const [ref] = parsed.positionals;
  if (!ref || parsed.positionals.length > 1) throw new UsageError('usage: fleet oauth-client revoke ID|CLIENT_ID');
  const revoked = await withDatabase(config, async ({ db }) => {
    const found = /^\d{1,9}$/.test(ref)
      ? await db.selectFrom('oauth_clients').select(['id', 'client_id', 'user_id', 'mode']).where('id', '=', Number(ref)).executeTakeFirst()
      : await findOauthClient(db, ref);
    if (!found) throw new DomainError('not_found', `no OAuth client matches "${ref}"`);
    const user = await db.selectFrom('users').select(['id', 'account_id']).where('id', '=', found.user_id).executeTakeFirstOrThrow();
    return inTransaction(db, async (trx) => {
      const result = (await revokeOauthClient(trx, { accountId: user.account_id, userId: user.id, mode: found.mode }, found.id))!;
      if (!result.revokedNow) throw new DomainError('conflict', `OAuth client ${found.id} (${found.client_id}) is already revoked, since ${result.client.revoked_at!.toISOString()}`);
      await recordCliAudit(trx, user.id, found.mode, { action: 'oauth_client.revoked', targetType: 'oauth_client', targetId: String(found.id), details: { clientId: found.client_id } });
      for (const entry of cascadeAuditEntries(result.minted)) await recordCliAudit(trx, user.id, found.mode, entry);
      return { ...result.client, minted: result.minted.length };
    });
  });
  const also = revoked.minted > 0 ? `, with the ${revoked.minted} credential${revoked.minted === 1 ? '' : 's'} minted through it` : '';
  printResult(
    parsed.json, { id: revoked.id, clientId: revoked.client_id, revokedAt: revoked.revoked_at?.toISOString(), mintedRevoked: revoked.minted },
    `OAuth client ${revoked.id} (${revoked.client_id}) and its tokens revoked${also}`,
  );
}

export async function oauthClientCommand(config: Config, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action === 'create') return create(config, rest);
  if (action === 'revoke') return revoke(config, rest);
  throw new UsageError(`usage: ${oauthClientUsage}`);
}
