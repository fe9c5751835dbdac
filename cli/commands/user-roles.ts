import { findAccount } from '../../db/accounts.ts';
import { accountUsers, setUserRoleAsOperator } from '../../db/account-users.ts';
import { isRole, ROLES, type Role } from '../../domain/access/roles.ts';
import { DomainError } from '../../domain/domain-error.ts';
import type { Db } from '../../db/database.ts';
import { parseCommand, positiveInteger, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';

export const userRolesUsage = [
  'fleet user list --account ID [--json]',
  'fleet user set --user ID --role owner|admin|dispatcher|viewer [--json]',
].join('\n       ');

export function parseRole(value: string): Role {
  if (!isRole(value)) throw new UsageError(`--role "${value}" is not a role; one of ${ROLES.join(', ')}`);
  return value;
}

/** `--role` of `fleet user create`, or its default: owner for an account's first user, viewer after. */
export async function roleForNewUser(db: Db, accountId: number, given: string | undefined): Promise<Role> {
  if (given !== undefined) return parseRole(given);
  return (await accountUsers(db, accountId)).length === 0 ? 'owner' : 'viewer';
}

/** `fleet user list`: an account's users with their roles. */
export async function userListCommand(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, { account: { type: 'string' } });
  const accountId = positiveInteger(requiredString(parsed, 'account'), '--account');
  const users = await withDatabase(config, async ({ db }) => {
    if (!(await findAccount(db, accountId))) throw new DomainError('not_found', `account ${accountId} does not exist`);
    return accountUsers(db, accountId);
  });
  const view = users.map((u) => ({ id: u.id, email: u.email, name: u.name, timezone: u.timezone, role: u.role, createdAt: u.created_at.toISOString() }));
  printResult(parsed.json, view, users.length === 0 ? `account ${accountId} has no users` : view.map((u) => `${u.id}\t${u.role}\t${u.email}\t${u.name ?? ''}\t${u.timezone}`));
}

/** `fleet user set --role`: the operator changes a role; an account's last owner stays one. */
export async function userSetCommand(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, { user: { type: 'string' }, role: { type: 'string' } });
  const userId = positiveInteger(requiredString(parsed, 'user'), '--user');
  const role = parseRole(requiredString(parsed, 'role'));
  const user = await withDatabase(config, ({ db }) => setUserRoleAsOperator(db, userId, role));
  printResult(parsed.json, { id: user.id, email: user.email, role: user.role }, `user ${user.id} (${user.email}) is now ${user.role}`);
}
