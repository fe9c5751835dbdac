import { sql, type Kysely } from 'kysely';

/**
 * Fair webhook delivery: an engine process with room for more deliveries claims the due ones a few
 * per account in turn (claimDueDeliveries), reading each enabled webhook's earliest pending
 * deliveries. This index answers that per webhook without walking its finished deliveries.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX webhook_deliveries_webhook_due_idx ON webhook_deliveries (webhook_id, next_attempt_at, id) WHERE status = 'pending'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS webhook_deliveries_webhook_due_idx`.execute(db);
}
