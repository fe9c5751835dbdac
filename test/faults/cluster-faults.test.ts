import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterLayout } from '../../deploy/local-cluster/cluster-layout.ts';
import { down, missingPrograms, up } from '../../deploy/local-cluster/local-cluster.ts';
import { DATABASE_NAME } from '../../deploy/local-cluster/postgres-pair.ts';
import { CLUSTER_FAULTS } from './cluster-fault-catalog.ts';
import { ClusterFleet } from './cluster-fleet.ts';
import { describeFaultSuite, dropDatabase, faultSettings, makeTemplateDatabase } from './fault-suite.ts';

/**
 * The fault suite on the local cluster (npm run local-cluster): the same seeded fleet, baseline and
 * checks as faults.test.ts, through HAProxy to two ingest, two engine and two API nodes, PgBouncer in
 * front of a PostgreSQL primary with a streaming replica for the API's reads, and a Redis Cluster of
 * three masters with a replica each. Each fault takes one part away: a Redis master (its replica
 * takes over), the PostgreSQL replica (the API reads from the primary), an ingest, engine or API node
 * (the other one carries on). The cluster is brought up by deploy/local-cluster's own `up`, on ports
 * and in a directory of this run's own, and purged at the end.
 */

const missing = missingPrograms();
// Ports from a base of this run's own: clear of the local cluster's default (17000), of
// test/local-cluster.test.ts's (21000 and up) and of Linux's ephemeral range (32768 and up).
const layout = clusterLayout(10_000 + (process.pid % 10) * 500, mkdtempSync(join(tmpdir(), 'fleetcore-cluster-faults-')));
let started = false;

describeFaultSuite<ClusterFleet>({
  title: 'Faults, proven on the local cluster',
  where: 'through HAProxy to 2 ingest, 2 engine and 2 API nodes, PgBouncer, a PostgreSQL primary and replica, a Redis Cluster of 3 masters and 3 replicas',
  artifact: 'cluster-faults.md',
  settings: faultSettings(),
  skipped: missing.length > 0 ? `needs ${missing.join('; ')}` : undefined,
  async setUp() {
    started = true;
    await up(layout, { fleetEnv: { GEOCODER: 'off' } });
    const fleet = new ClusterFleet(layout, 'fleet_faults_template');
    // Each run starts nodes of its own on `fleet`, made again from the template.
    await fleet.stopClusterNodes();
    await dropDatabase(fleet.adminUrl, DATABASE_NAME);
    await makeTemplateDatabase(fleet.adminUrl, fleet.templateDatabase);
    return fleet;
  },
  async tearDown() {
    if (started) await down(layout, { purge: true });
  },
  faults: CLUSTER_FAULTS,
});
