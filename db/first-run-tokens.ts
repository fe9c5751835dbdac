import { sql } from 'kysely';
import type { Db } from './database.ts';

/** Stores a setup token's hash, in force until `expiresAt`; expired ones are swept on the way. */
export async function insertFirstRunToken(db: Db, tokenHash: string, expiresAt: Date): Promise<void> {
  await sql`DELETE FROM first_run_tokens WHERE expires_at < now()`.execute(db);
  await db.insertInto('first_run_tokens').values({ token_hash: tokenHash, expires_at: expiresAt }).execute();
}

/**
 * Where a setup token stands: `closed` when no token is in force at all (never issued, used, or
 * expired), `wrong` when some are but not this one, `open` when this one is.
 */
export async function firstRunTokenStanding(db: Db, tokenHash: string): Promise<'closed' | 'wrong' | 'open'> {
  const row = await db.selectFrom('first_run_tokens')
    .select((eb) => [eb.fn.countAll<string>().as('open'), eb.fn.count<string>(eb.case().when('token_hash', '=', tokenHash).then(1).end()).as('this')])
    .where('expires_at', '>', new Date())
    .executeTakeFirstOrThrow();
  if (Number(row.open) === 0) return 'closed';
  return Number(row.this) > 0 ? 'open' : 'wrong';
}
