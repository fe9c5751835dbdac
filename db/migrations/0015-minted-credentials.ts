import { sql, type Kysely } from 'kysely';

/**
 * Which credential minted an API key or an OAuth client through the API (an API key, or an OAuth
 * client through one of its tokens), so that revoking a credential revokes what it handed on. Null
 * for those the operator made with `fleet`, and for everything made before this migration.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['api_keys', 'oauth_clients']) {
    await sql`ALTER TABLE ${sql.table(table)}
      ADD COLUMN parent_api_key_id integer REFERENCES api_keys (id) ON DELETE SET NULL,
      ADD COLUMN parent_oauth_client_id integer REFERENCES oauth_clients (id) ON DELETE SET NULL,
      ADD CONSTRAINT ${sql.id(`${table}_one_parent`)} CHECK (parent_api_key_id IS NULL OR parent_oauth_client_id IS NULL)`.execute(db);
    // A revocation walks down from the revoked credential to what it minted.
    await sql`CREATE INDEX ${sql.id(`${table}_parent_key_idx`)} ON ${sql.table(table)} (parent_api_key_id) WHERE parent_api_key_id IS NOT NULL`.execute(db);
    await sql`CREATE INDEX ${sql.id(`${table}_parent_client_idx`)} ON ${sql.table(table)} (parent_oauth_client_id) WHERE parent_oauth_client_id IS NOT NULL`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['api_keys', 'oauth_clients']) {
    await sql`ALTER TABLE ${sql.table(table)}
      DROP CONSTRAINT IF EXISTS ${sql.id(`${table}_one_parent`)},
      DROP COLUMN IF EXISTS parent_api_key_id,
      DROP COLUMN IF EXISTS parent_oauth_client_id`.execute(db);
  }
}
