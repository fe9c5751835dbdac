import type { Db } from './database.ts';
import type { Account } from './schema.ts';

export async function createAccount(db: Db, name: string): Promise<Account> {
  return db.insertInto('accounts').values({ name }).returningAll().executeTakeFirstOrThrow();
}

export async function findAccount(db: Db, id: number): Promise<Account | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countAccounts(db: Db): Promise<number> {
  const row = await db.selectFrom('accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
