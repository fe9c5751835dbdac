import { sql } from 'kysely';
import type { Db } from './database.ts';
import { pendingMigrations } from './migrator.ts';

export type Readiness = { ready: true } | { ready: false; reason: string };

/** Whether the database answers and its schema is current: what a load balancer's readiness probe asks. */
export async function databaseReadiness(db: Db): Promise<Readiness> {
  try {
    await sql`SELECT 1`.execute(db);
    const pending = await pendingMigrations(db);
    if (pending.length > 0) return { ready: false, reason: `pending migrations: ${pending.join(', ')}` };
    return { ready: true };
  } catch (error) {
    return { ready: false, reason: `database unreachable: ${(error as Error).message}` };
  }
}
