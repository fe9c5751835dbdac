import type { Db } from './database.ts';
import type { Account } from './schema.ts';

export async function createAccount(db: Db, name: string, options: { speedLimitKmh?: number | null } = {}): Promise<Account> {
  return db.insertInto('accounts').values({ name, speed_limit_kmh: options.speedLimitKmh ?? null }).returningAll().executeTakeFirstOrThrow();
}

/** Sets (or, with null, removes) the speed limit of the account's vehicles that have none of their own. */
export async function setAccountSpeedLimit(db: Db, id: number, speedLimitKmh: number | null): Promise<Account | undefined> {
  return db.updateTable('accounts').set({ speed_limit_kmh: speedLimitKmh }).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function findAccount(db: Db, id: number): Promise<Account | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countAccounts(db: Db): Promise<number> {
  const row = await db.selectFrom('accounts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
