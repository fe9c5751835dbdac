import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.ts';
import { freshDatabase, serve, type FreshDatabase, type Serving } from './support/fleet-process.ts';
import { engineOutput, seedMixedFleet } from './support/mixed-fleet.ts';

const DEVICES = 40;
const FIXES = 150;

async function caughtUp(database: DatabaseHandle): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM device_states s JOIN device_engine_states e ON e.device_id = s.device_id
    WHERE e.cursor_fix_time = s.fix_time`.execute(database.db);
  return rows[0]!.n;
}

/**
 * Engine workers are separate processes sharing one Redis (BullMQ). The same fleet's fixes go into two
 * databases; one engine process evaluates the first, two evaluate the second, taking jobs from the
 * same queue (each also queues every device at start, so both get the same devices). The events and
 * visits must be the same, row for row.
 */
describe.skipIf(!process.env.DATABASE_URL || !process.env.REDIS_URL)('engine workers in several processes over one Redis', () => {
  it('store exactly the events and visits one process stores', async () => {
    const fresh: FreshDatabase[] = [await freshDatabase(), await freshDatabase()];
    const servers: Serving[] = [];
    const handles: DatabaseHandle[] = [];
    try {
      const seeded = [];
      for (const f of fresh) {
        const handle = await openDatabase({ databaseUrl: f.env.DATABASE_URL, dataDir: '', embedded: 'own' });
        handles.push(handle);
        const fleet = await seedMixedFleet(handle, 777, DEVICES, FIXES);
        for (let i = 0; i < fleet.fixes.length; i += 1000) await fleet.write(fleet.fixes.slice(i, i + 1000));
        seeded.push(fleet);
      }
      const engine = (f: FreshDatabase) =>
        serve({ ...f.env, REDIS_URL: process.env.REDIS_URL!, PORT: '0', ENGINE_CONCURRENCY: '2', LOG_LEVEL: 'warn' }, /running engine/, ['--roles', 'engine']);
      servers.push(await engine(fresh[0]!), ...(await Promise.all([engine(fresh[1]!), engine(fresh[1]!)])));

      const deadline = Date.now() + 60_000;
      while ((await caughtUp(handles[0]!)) < DEVICES || (await caughtUp(handles[1]!)) < DEVICES) {
        if (Date.now() > deadline) throw new Error(`engines did not catch up\n${servers.map((s) => s.output()).join('\n')}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const one = await engineOutput(handles[0]!, seeded[0]!.accountId);
      const two = await engineOutput(handles[1]!, seeded[1]!.accountId);
      expect(one.events.length).toBeGreaterThan(100);
      expect(two).toEqual(one);
    } finally {
      for (const s of servers) s.process.kill('SIGTERM');
      await Promise.all(servers.map((s) => s.exited));
      for (const h of handles) await h.close();
      for (const f of fresh) await f.destroy();
    }
  }, 180_000);
});
