import { sql } from 'kysely';
import { inTransaction, type Db } from './database.ts';

export type FirstAccountOutcome =
  | { kind: 'created'; accountId: number; userId: number }
  /** An account exists already: every setup token is deleted, none can work any more. */
  | { kind: 'account-exists' }
  /** The setup token is not (or no longer) in force: used by another request meanwhile, or expired. */
  | { kind: 'token-gone' };

/**
 * The first account and its owner, with a password, made with a first-run setup token. One transaction
 * first locks the accounts table, so two setups racing (at any API processes) cannot both find it
 * empty; it uses the token up and deletes every other one, so the winner's link and all the others stop
 * working when the account is committed.
 */
export async function createFirstAccount(
  db: Db,
  setupTokenHash: string,
  first: { accountName: string; email: string; name: string | null; timezone: string; passwordHash: string },
): Promise<FirstAccountOutcome> {
  return inTransaction(db, async (trx): Promise<FirstAccountOutcome> => {
    await sql`LOCK TABLE accounts IN EXCLUSIVE MODE`.execute(trx);
    const existing = await trx.selectFrom('accounts').select('id').limit(1).executeTakeFirst();
    if (existing) {
      await trx.deleteFrom('first_run_tokens').execute();
      return { kind: 'account-exists' };
    }
    const used = await trx.deleteFrom('first_run_tokens')
      .where('token_hash', '=', setupTokenHash).where('expires_at', '>', new Date())
      .returning('token_hash').executeTakeFirst();
    if (!used) return { kind: 'token-gone' };
    await trx.deleteFrom('first_run_tokens').execute();
    const account = await trx.insertInto('accounts').values({ name: first.accountName, speed_limit_kmh: null }).returning('id').executeTakeFirstOrThrow();
    const user = await trx.insertInto('users')
      .values({ account_id: account.id, email: first.email.toLowerCase(), name: first.name, timezone: first.timezone, role: 'owner', password_hash: first.passwordHash })
      .returning('id').executeTakeFirstOrThrow();
    return { kind: 'created', accountId: account.id, userId: user.id };
  });
}
