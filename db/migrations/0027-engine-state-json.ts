import { sql, type Kysely } from 'kysely';

/**
 * What the engine writes back for every device it evaluates, each step, and reads back whole.
 * `accumulators` stays `jsonb`: the vehicle lists read keys of it for every vehicle on every request,
 * and `->>` on `json` scans the whole text each time (measured 13 µs a row against under 1).
 */
const COLUMNS = ['pending', 'segment', 'driving', 'fuel'] as const;

/**
 * The engine's per-device state documents are stored as `json`, not `jsonb`, as a fix's attributes are
 * (docs/decisions/0027-fix-attributes-stored-as-json.md): each engine step writes them for every
 * device it evaluated and reads them back whole.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of COLUMNS) await retype(db, column, 'json');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of COLUMNS) await retype(db, column, 'jsonb');
}

async function retype(db: Kysely<unknown>, column: string, type: 'json' | 'jsonb'): Promise<void> {
  const name = sql.ref(column);
  const { rows } = await sql<{ fallback: string | null }>`
    SELECT pg_get_expr(d.adbin, d.adrelid) AS fallback FROM pg_attrdef d
    JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
    WHERE d.adrelid = 'device_engine_states'::regclass AND a.attname = ${column}`.execute(db);
  if (rows[0]?.fallback) await sql`ALTER TABLE device_engine_states ALTER COLUMN ${name} DROP DEFAULT`.execute(db);
  await sql`ALTER TABLE device_engine_states ALTER COLUMN ${name} TYPE ${sql.raw(type)} USING ${name}::${sql.raw(type)}`.execute(db);
  if (rows[0]?.fallback) {
    // The same default, cast to the new type ('[]'::jsonb becomes '[]'::json).
    await sql`ALTER TABLE device_engine_states ALTER COLUMN ${name} SET DEFAULT ${sql.raw(rows[0].fallback.replace(/::jsonb?$/, `::${type}`))}`.execute(db);
  }
}
