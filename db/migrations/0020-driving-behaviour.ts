import { sql, type Kysely } from 'kysely';

/**
 * Harsh driving and idling (docs/engine.md, "Driving behaviour"): `device_engine_states.driving`, what
 * the detectors remember between engine steps (the previous usable fix and the end of the last
 * manoeuvre of each kind; whether and since when the vehicle idles), committed with the cursor like
 * the trip segmenter's state, so a replay or a resend logs nothing twice. Null before the first step
 * after this migration: detection starts then (history already evaluated is not re-read).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE device_engine_states ADD COLUMN driving jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE device_engine_states DROP COLUMN IF EXISTS driving`.execute(db);
}
