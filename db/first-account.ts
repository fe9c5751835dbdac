import { sql } from 'kysely';
import { inTransaction, type Db } from './database.ts';

/**
 * The first account and its owner, with a password, made in one transaction that first locks the
 * accounts table, so two setups racing cannot both find it empty: undefined when an account exists.
 */
export async function createFirstAccount(
  db: Db,
  first: { accountName: string; email: string; name: string | null; timezone: string; passwordHash: string },
): Promise<{ accountId: number; userId: number } | undefined> {
  return inTransaction(db, async (trx) => {
    await sql`LOCK TABLE accounts IN EXCLUSIVE MODE`.execute(trx);
    const existing = await trx.selectFrom('accounts').select('id').limit(1).executeTakeFirst();
    if (existing) return undefined;
    const account = await trx.insertInto('accounts').values({ name: first.accountName, speed_limit_kmh: null }).returning('id').executeTakeFirstOrThrow();
    const user = await trx.insertInto('users')
      .values({ account_id: account.id, email: first.email.toLowerCase(), name: first.name, timezone: first.timezone, role: 'owner', password_hash: first.passwordHash })
      .returning('id').executeTakeFirstOrThrow();
    return { accountId: account.id, userId: user.id };
  });
}
