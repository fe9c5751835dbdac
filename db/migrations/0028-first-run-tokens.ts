import { sql, type Kysely } from 'kysely';

/**
 * `first_run_tokens`: the setup links `fleet serve` prints on a database with no account
 * (docs/api/sessions.md). Kept here, not in the printing process's memory, so a link printed by one
 * API process works at every API process of the database (behind a load balancer, or `--processes N`).
 * Only the SHA-256 of each token is stored; creating the first account deletes them all in its
 * transaction, and each expires on its own.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE first_run_tokens (
      token_hash text PRIMARY KEY,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS first_run_tokens`.execute(db);
}
