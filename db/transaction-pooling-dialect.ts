import { PostgresAdapter, PostgresDialect, sql, type DialectAdapter, type Kysely } from 'kysely';

/** Kysely's own migration lock id, so a process migrating in either pool mode waits for the other. */
const MIGRATION_LOCK_ID = BigInt('3853314791062309107');

/**
 * Migrations behind a transaction pooler (DATABASE_POOL_MODE=transaction). Kysely's PostgreSQL
 * migrator takes a session-level advisory lock, runs the migrations in a transaction and unlocks
 * after it; through PgBouncer in transaction mode the lock, the transaction and the unlock may each
 * land on a different server connection, and a lock left on one blocks every later migration for up
 * to an hour. Here the lock is transaction-scoped and the migrations run inside that same transaction:
 * BEGIN and the lock before, COMMIT after, which rolls back instead when a migration failed (PostgreSQL
 * ends an aborted transaction that way), so either every pending migration is applied or none.
 */
class TransactionScopedMigrationLock extends PostgresAdapter {
  // The migrator then runs the migrations on the connection that holds the lock's transaction
  // instead of opening a transaction of its own.
  override get supportsTransactionalDdl(): boolean {
    return false;
  }

  override async acquireMigrationLock(db: Kysely<any>): Promise<void> {
    await sql`BEGIN`.execute(db);
    await sql`SELECT pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_ID)})`.execute(db);
  }

  override async releaseMigrationLock(db: Kysely<any>): Promise<void> {
    await sql`COMMIT`.execute(db);
  }
}

/** PostgreSQL through a transaction pooler: only the migration lock differs from PostgresDialect. */
export class TransactionPoolingDialect extends PostgresDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionScopedMigrationLock();
  }
}
