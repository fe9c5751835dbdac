import { createAccount } from '../../db/accounts.ts';
import { parseCommand, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';

export const accountUsage = 'fleet account create --name NAME [--json]';

export async function accountCommand(config: Config, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action !== 'create') throw new UsageError(`usage: ${accountUsage}`);
  const parsed = parseCommand(rest, { name: { type: 'string' } });
  const name = requiredString(parsed, 'name');
  const account = await withDatabase(config, ({ db }) => createAccount(db, name));
  printResult(parsed.json, { id: account.id, name: account.name }, `account ${account.id} created: ${account.name}`);
}
