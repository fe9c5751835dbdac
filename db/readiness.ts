import { sql } from 'kysely';
import type { Db } from './database.ts';
import { pendingMigrations } from './migrator.ts';

/** `reason` is for anyone who asks (no detail of the database); `detail` for the operator's log. */
export type Readiness = { ready: true } | { ready: false; reason: string; detail?: string };

/** Whether the database answers and its schema is current: what a load balancer's readiness probe asks. */
export async function databaseReadiness(db: Db): Promise<Readiness> {
  try {
    await sql`SELECT 1`.execute(db);
    const pending = await pendingMigrations(db);
    if (pending.length > 0) return { ready: false, reason: `pending migrations: ${pending.join(', ')}` };
    return { ready: true };
  } catch (error) {
    return { ready: false, reason: 'database unreachable', detail: (error as Error).message };
  }
}
