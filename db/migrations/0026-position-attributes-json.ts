import { sql, type Kysely } from 'kysely';

/** The tables whose attributes every stored fix writes: the history and the latest state. */
const TABLES = ['positions', 'device_states'] as const;

/**
 * A fix's attributes are stored as `json`, not `jsonb` (docs/decisions/0027-fix-attributes-stored-as-json.md):
 * each fix writes them twice (its history row and its device's latest state) and they are read back
 * whole (the history, the status) or by a few keys on rare paths, so building jsonb's binary form on
 * every write was the largest part of PostgreSQL's cost per position. `json` checks the text and keeps
 * it as it came. Rewrites every partition of the history once, in the migration's transaction.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) await retype(db, table, 'json');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of TABLES) await retype(db, table, 'jsonb');
}

async function retype(db: Kysely<unknown>, table: string, type: 'json' | 'jsonb'): Promise<void> {
  const name = sql.table(table);
  await sql`ALTER TABLE ${name} ALTER COLUMN attributes DROP DEFAULT`.execute(db);
  await sql`ALTER TABLE ${name} ALTER COLUMN attributes TYPE ${sql.raw(type)} USING attributes::${sql.raw(type)}`.execute(db);
  await sql`ALTER TABLE ${name} ALTER COLUMN attributes SET DEFAULT ${sql.raw(`'{}'::${type}`)}`.execute(db);
}
