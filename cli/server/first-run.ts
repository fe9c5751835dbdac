import { issueSetupToken } from '../../api/auth/first-run-setup.ts';
import { countAccounts } from '../../db/accounts.ts';
import type { Db } from '../../db/database.ts';

/**
 * On a database with no account (and no demo seeded), opens the first account's setup and answers the
 * lines to print: a one-time link to the console's setup form, so the first person needs no shell.
 * Each API process prints its own; any of them works at every API process of the database.
 */
export async function openFirstRun(db: Db, baseUrl: string): Promise<string[] | undefined> {
  if ((await countAccounts(db)) > 0) return undefined;
  const token = await issueSetupToken(db);
  return [
    'No account yet. Create the first account and its owner in the console:',
    `  ${baseUrl.replace(/\/+$/, '')}/console#setup=${token}`,
    'The link works once, for 24 hours, while no account exists, through any API process of this database (or run: fleet account create, then fleet user create).',
  ];
}
