import { freePort } from '../support/fleet-process.ts';
import { FAULTS } from './fault-catalog.ts';
import { describeFaultSuite, dropDatabase, faultSettings, makeTemplateDatabase } from './fault-suite.ts';
import { ProcessFleet } from './process-fleet.ts';
import { RedisServerProcess } from './redis-server-process.ts';

/**
 * Faults, proven: a seeded fleet of Teltonika and GT06 trackers drives at a steady pace through
 * `fleet serve --roles ingest`, `--roles engine` and `--roles api` on PostgreSQL and a Redis of the
 * suite's own, while one fault is injected per run. After each: every acknowledged fix stored once,
 * the events equal to the undisturbed run's row for row, every event delivered to the webhook at
 * least once, every travel where the baseline's is, the processes up without anyone restarting
 * them (but the one the suite killed), and the time the pipeline took to catch up. One table at the end.
 * cluster-faults.test.ts runs the same fleet on the local cluster.
 */

const databaseUrl = process.env.DATABASE_URL;

describeFaultSuite<ProcessFleet>({
  title: 'Faults, proven',
  where: 'three processes on one Redis',
  artifact: 'faults.md',
  settings: faultSettings(),
  async setUp() {
    if (!databaseUrl) throw new Error('npm run test:faults needs DATABASE_URL: a PostgreSQL 15 server with PostGIS (the suite creates and drops its own databases there)');
    const templateDatabase = `fleetcore_faults_tmpl_${process.pid}`;
    await makeTemplateDatabase(databaseUrl, templateDatabase);
    const redis = new RedisServerProcess(await freePort());
    await redis.start();
    return new ProcessFleet(databaseUrl, templateDatabase, redis);
  },
  async tearDown(fleet) {
    if (!fleet) return;
    await fleet.redis.stop();
    await dropDatabase(fleet.adminUrl, fleet.templateDatabase);
  },
  faults: FAULTS,
});
