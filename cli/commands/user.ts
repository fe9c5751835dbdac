import { findAccount } from '../../db/accounts.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { createUser } from '../../db/users.ts';
import { isValidTimeZone } from '../../domain/time/zoned-time.ts';
import { optionalString, parseCommand, positiveInteger, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';
import { roleForNewUser, userListCommand, userRolesUsage, userSetCommand } from './user-roles.ts';
import { publicBaseUrl, resetPasswordUsage, userResetPasswordCommand } from './user-password.ts';
import { issueSignInLink } from '../../api/auth/sign-in-link.ts';

export const userUsage = `fleet user create --account ID --email EMAIL --timezone IANA_ZONE [--name NAME] [--role ROLE] [--json]\n       ${userRolesUsage}\n       ${resetPasswordUsage}`;

const EMAIL = /^[^\s@]+@[^\s@]+$/;

export async function userCommand(config: Config, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action === 'list') return userListCommand(config, rest);
  if (action === 'set') return userSetCommand(config, rest);
  if (action === 'reset-password') return userResetPasswordCommand(config, rest);
  if (action !== 'create') throw new UsageError(`usage: ${userUsage}`);
  const parsed = parseCommand(rest, {
    account: { type: 'string' },
    email: { type: 'string' },
    timezone: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string' },
  });
  const accountId = positiveInteger(requiredString(parsed, 'account'), '--account');
  const email = requiredString(parsed, 'email');
  if (!EMAIL.test(email)) throw new UsageError(`--email "${email}" is not an email address`);
  const timezone = requiredString(parsed, 'timezone');
  if (!isValidTimeZone(timezone)) throw new UsageError(`--timezone "${timezone}" is not an IANA timezone (e.g. America/Mexico_City)`);
  const { user, link } = await withDatabase(config, async ({ db }) => {
    if (!(await findAccount(db, accountId))) throw new DomainError('not_found', `account ${accountId} does not exist`);
    const role = await roleForNewUser(db, accountId, optionalString(parsed, 'role'));
    const created = await createUser(db, { accountId, email, timezone, name: optionalString(parsed, 'name') ?? null, role });
    return { user: created, link: await issueSignInLink(db, created.id, publicBaseUrl(config)) };
  });
  printResult(
    parsed.json,
    { id: user.id, accountId: user.account_id, email: user.email, name: user.name, timezone: user.timezone, role: user.role, setPasswordUrl: link.url },
    [
      `user ${user.id} created: ${user.email} (${user.timezone}, ${user.role}) in account ${user.account_id}`,
      `one-time link to set a password (works once, until ${link.expiresAt.toISOString()}): ${link.url}`,
    ],
  );
}
