import type { Db } from './database.ts';
import { DomainError } from '../domain/domain-error.ts';
import { isUniqueViolation } from './unique-violation.ts';
import type { User } from './schema.ts';
import type { Role } from '../domain/access/roles.ts';

export interface NewUser {
  accountId: number;
  email: string;
  name?: string | null;
  timezone: string;
  /** Absent: owner (the column's default). */
  role?: Role;
}

export async function createUser(db: Db, user: NewUser): Promise<User> {
  try {
    return await db
      .insertInto('users')
      .values({ account_id: user.accountId, email: user.email.toLowerCase(), name: user.name ?? null, timezone: user.timezone, role: user.role })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (error) {
    if (isUniqueViolation(error)) throw new DomainError('conflict', `a user with email ${user.email} already exists`);
    throw error;
  }
}

/** A user by numeric id or by email (removed users are not found). */
export async function findUser(db: Db, idOrEmail: string | number): Promise<User | undefined> {
  const query = db.selectFrom('users').selectAll().where('removed_at', 'is', null);
  if (typeof idOrEmail === 'number' || /^\d+$/.test(idOrEmail)) {
    return query.where('id', '=', Number(idOrEmail)).executeTakeFirst();
  }
  return query.where('email', '=', idOrEmail.toLowerCase()).executeTakeFirst();
}

export async function usersOfAccount(db: Db, accountId: number): Promise<User[]> {
  return db.selectFrom('users').selectAll().where('account_id', '=', accountId).where('removed_at', 'is', null).orderBy('id').execute();
}
