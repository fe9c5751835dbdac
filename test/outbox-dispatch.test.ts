import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimUnpublished } from '../db/engine-outbox.ts';
import type { Job, JobQueue } from '../engine/queue/job-queue.ts';
import { dispatchOutbox, publishOutboxRecords } from '../engine/workers/dispatch-outbox.ts';
import { testQueues } from './support/engine-harness.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database?.destroy();
});

async function outboxRecords(n: number): Promise<number[]> {
  // Records of earlier tests are out of the way: only these are unpublished.
  await sql`UPDATE engine_outbox SET published_at = now() WHERE published_at IS NULL`.execute(database.db);
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const row = await database.db.insertInto('engine_outbox').values({ kind: 'test.event', payload: JSON.stringify({ n: i }) }).returning('id').executeTakeFirstOrThrow();
    ids.push(row.id);
  }
  return ids;
}

/** A queue whose every add takes `ms`: Redis far away, or busy. */
const slow = (queue: JobQueue, ms: number): JobQueue => ({
  ...queue,
  name: queue.name,
  add: async (...args) => {
    await new Promise((r) => setTimeout(r, ms));
    return queue.add(...args);
  },
});

const until = async (check: () => boolean, ms = 5_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('not in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('the outbox dispatcher', () => {
  it('holds no transaction or row lock while it publishes: other writers are not held up by a slow queue', async () => {
    const ids = await outboxRecords(5);
    const { backend } = testQueues();
    try {
      const dispatching = dispatchOutbox(database.db, slow(backend.queue('webhooks'), 200));
      await new Promise((r) => setTimeout(r, 100)); // the first add is under way
      const started = Date.now();
      // Another connection writes the very rows being published, as an ingest batch or the engine would.
      await sql`UPDATE engine_outbox SET kind = kind WHERE id = ANY(${ids}::bigint[])`.execute(database.db);
      const waited = Date.now() - started;
      expect(await dispatching).toBe(5);
      expect(waited).toBeLessThan(400); // a transaction held across the adds would make it wait ~900 ms
    } finally {
      await backend.close();
    }
  });

  it('publishes each record once even when a dispatcher dies between publishing and marking', async () => {
    await outboxRecords(3);
    const { backend } = testQueues();
    try {
      const queue = backend.queue('webhooks');
      // A dispatcher claims and publishes, then dies before marking them published.
      const claimed = await claimUnpublished(database.db, 100, 50);
      expect(claimed).toHaveLength(3);
      await publishOutboxRecords(queue, claimed);
      // While its claim holds, nobody else takes them…
      expect(await dispatchOutbox(database.db, queue, { claimMs: 50 })).toBe(0);
      await new Promise((r) => setTimeout(r, 80));
      // …and once it has expired they are published again: the job ids make that a no-op.
      expect(await dispatchOutbox(database.db, queue, { claimMs: 50 })).toBe(3);
      expect(await dispatchOutbox(database.db, queue)).toBe(0);
      const delivered: Job[] = [];
      backend.worker('webhooks', async (job) => void delivered.push(job));
      await until(() => delivered.length >= 3);
      await new Promise((r) => setTimeout(r, 200));
      expect(delivered.map((j) => (j.data as { outboxId: number }).outboxId).sort()).toEqual(claimed.map((r) => r.id).sort());
    } finally {
      await backend.close();
    }
  });
});
