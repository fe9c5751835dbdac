import { findAccount } from '../../db/accounts.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { createUser } from '../../db/users.ts';
import { isValidTimeZone } from '../../api/time/zoned-time.ts';
import { optionalString, parseCommand, positiveInteger, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';

export const userUsage = 'fleet user create --account ID --email EMAIL --timezone IANA_ZONE [--name NAME] [--json]';

const EMAIL = /^[^\s@]+@[^\s@]+$/;

export async function userCommand(config: Config, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action !== 'create') throw new UsageError(`usage: ${userUsage}`);
  const parsed = parseCommand(rest, {
    account: { type: 'string' },
    email: { type: 'string' },
    timezone: { type: 'string' },
    name: { type: 'string' },
  });
  const accountId = positiveInteger(requiredString(parsed, 'account'), '--account');
  const email = requiredString(parsed, 'email');
  if (!EMAIL.test(email)) throw new UsageError(`--email "${email}" is not an email address`);
  const timezone = requiredString(parsed, 'timezone');
  if (!isValidTimeZone(timezone)) throw new UsageError(`--timezone "${timezone}" is not an IANA timezone (e.g. America/Mexico_City)`);
  const user = await withDatabase(config, async ({ db }) => {
    if (!(await findAccount(db, accountId))) throw new DomainError('not_found', `account ${accountId} does not exist`);
    return createUser(db, { accountId, email, timezone, name: optionalString(parsed, 'name') ?? null });
  });
  printResult(
    parsed.json,
    { id: user.id, accountId: user.account_id, email: user.email, name: user.name, timezone: user.timezone },
    `user ${user.id} created: ${user.email} (${user.timezone}) in account ${user.account_id}`,
  );
}
