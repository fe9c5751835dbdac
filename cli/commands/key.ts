import { issueApiKey } from '../../api/auth/api-key-token.ts';
import { ALL_PERMISSIONS, parsePermissions } from '../../domain/access/permissions.ts';
import { insertApiKey, revokeApiKey } from '../../db/api-keys.ts';
import { cascadeAuditEntries } from '../../db/minted-credentials.ts';
import { DomainError } from '../../domain/domain-error.ts';
import type { DeviceMode } from '../../db/schema.ts';
import { findUser } from '../../db/users.ts';
import { optionalString, parseCommand, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';
import { inTransaction } from '../../db/database.ts';
import { recordCliAudit } from '../cli-audit.ts';

export const keyUsage = [
  'fleet key create --user ID|EMAIL [--mode live|test] [--expires 30d|2025-12-31T00:00Z] [--permissions LIST] [--name NAME] [--json]',
  'fleet key revoke ID|PREFIX [--json]',
].join('\n       ');

export function parseMode(raw: string | undefined): DeviceMode {
  const mode = raw ?? 'live';
  if (mode !== 'live' && mode !== 'test') throw new UsageError(`--mode must be live or test, got "${mode}"`);
  return mode;
}

/** `30d`, `12h` or an ISO date-time, which must lie in the future. */
export function parseExpiry(raw: string, now = new Date()): Date {
  const relative = /^(\d{1,5})([dh])$/.exec(raw);
  const expires = relative
    ? new Date(now.getTime() + Number(relative[1]) * (relative[2] === 'd' ? 86_400_000 : 3_600_000))
    : new Date(/^\d{4}-\d{2}-\d{2}/.test(raw) ? raw : Number.NaN);
  if (Number.isNaN(expires.getTime())) {
    throw new UsageError(`--expires must be like 30d, 12h or an ISO date-time, got "${raw}"`);
  }
  if (expires <= now) throw new UsageError(`--expires ${raw} is not in the future`);
  return expires;
}

async function create(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, {
    user: { type: 'string' },
    mode: { type: 'string' },
    expires: { type: 'string' },
    permissions: { type: 'string' },
    name: { type: 'string' },
  });
  const userRef = requiredString(parsed, 'user');
  const mode = parseMode(optionalString(parsed, 'mode'));
  const expiresRaw = optionalString(parsed, 'expires');
  const expiresAt = expiresRaw ? parseExpiry(expiresRaw) : null;
  let permissions: string[];
  try {
    permissions = parsePermissions(optionalString(parsed, 'permissions') ?? ALL_PERMISSIONS);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const issued = issueApiKey(mode);
  const row = await withDatabase(config, async ({ db }) => {
    const user = await findUser(db, userRef);
    if (!user) throw new DomainError('not_found', `user ${userRef} does not exist`);
    return inTransaction(db, async (trx) => {
      const key = await insertApiKey(trx, { userId: user.id, name: optionalString(parsed, 'name') ?? null, prefix: issued.prefix, keyHash: issued.hash, mode, permissions, expiresAt });
      await recordCliAudit(trx, user.id, mode, {
        action: 'api_key.created', targetType: 'api_key', targetId: String(key.id),
        details: { prefix: key.prefix, name: key.name, permissions, expiresAt: expiresAt?.toISOString() ?? null },
      });
      return key;
    });
  });
  printResult(
    parsed.json,
    { id: row.id, key: issued.key, prefix: row.prefix, userId: row.user_id, mode, permissions, expiresAt: row.expires_at?.toISOString() ?? null },
    [
      `API key ${row.id} (${mode}) for user ${row.user_id}; permissions ${permissions.join(', ')}${row.expires_at ? `; expires ${row.expires_at.toISOString()}` : ''}`,
      '',
      `  ${issued.key}`,
      '',
      'Store it now: it is shown only once (only its hash is kept).',
    ],
  );
}

async function revoke(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, {}, true);
  const [ref] = parsed.positionals;
  if (!ref || parsed.positionals.length > 1) throw new UsageError('usage: fleet key revoke ID|PREFIX');
  const row = await withDatabase(config, ({ db }) =>
    inTransaction(db, async (trx) => {
      const { key: revoked, minted } = await revokeApiKey(trx, ref);
      await recordCliAudit(trx, revoked.user_id, revoked.mode, { action: 'api_key.revoked', targetType: 'api_key', targetId: String(revoked.id), details: { prefix: revoked.prefix } });
      for (const entry of cascadeAuditEntries(minted)) await recordCliAudit(trx, revoked.user_id, revoked.mode, entry);
      return { ...revoked, minted: minted.length };
    }),
  );
  const also = row.minted > 0 ? `, with the ${row.minted} credential${row.minted === 1 ? '' : 's'} it minted` : '';
  printResult(parsed.json, { id: row.id, prefix: row.prefix, revokedAt: row.revoked_at?.toISOString(), mintedRevoked: row.minted }, `API key ${row.id} (${row.prefix}…) revoked${also}`);
}

export async function keyCommand(config: Config, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action === 'create') return create(config, rest);
  if (action === 'revoke') return revoke(config, rest);
  throw new UsageError(`usage: ${keyUsage}`);
}
