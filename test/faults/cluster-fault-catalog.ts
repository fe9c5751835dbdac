import { join } from 'node:path';
import pg from 'pg';
import { PG_BIN, postgresUrl, startPostgresPair } from '../../deploy/local-cluster/postgres-pair.ts';
import { run } from '../../deploy/local-cluster/postgres-user.ts';
import { startRedisCluster } from '../../deploy/local-cluster/redis-cluster.ts';
import { sharedEnvironment } from '../../deploy/local-cluster/fleet-nodes.ts';
import { engineQueueName } from '../../engine/engine-queues.ts';
import { askRedis } from '../../deploy/local-cluster/redis-cluster.ts';
import type { ClusterFleet } from './cluster-fleet.ts';
import { diedWithDeliveriesInFlight, killNode } from './fault-catalog.ts';
import type { Fault, FaultContext, FaultWindow } from './fleet-run.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long the PostgreSQL replica stays stopped. */
const REPLICA_OUTAGE_MS = 5_000;

/** An engine queue's key on a cluster, under the hash tag fleet gives it: `{fleetcore-<database>:<queue>}` (bullmq-queues.ts). */
const engineQueueKey = (databaseName: string, index: number) => `{fleetcore-${databaseName}:${engineQueueName(index)}}:wait`;

/** The master serving `slot`, and its replicas, as the node on `askPort` sees it. */
async function slotOwner(askPort: number, slot: number): Promise<{ master: number; replicas: number[] } | undefined> {
  const ranges = await askRedis(askPort, (c) => c.cluster('SLOTS'));
  const range = ranges.find(([from, to]) => slot >= from && slot <= to);
  const [, , master, ...replicas] = range ?? [];
  return master ? { master: master[1], replicas: replicas.map((r) => r[1]) } : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The master holding the most engine queues (ENGINE_QUEUES as the cluster sets it), the first
 * queue's (travel starts and schedules) on a tie: the busiest, for the engine.
 */
async function busiestMaster(fleet: ClusterFleet, databaseName: string): Promise<{ slot: number; queues: number; master: number; replicas: number[] }> {
  const ask = fleet.layout.redisPorts[0]!;
  const count = Number(sharedEnvironment(fleet.layout).ENGINE_QUEUES ?? '1');
  const byMaster = new Map<number, { slot: number; queues: number; master: number; replicas: number[] }>();
  for (let i = 0; i < count; i++) {
    const slot = Number(await askRedis(ask, (c) => c.cluster('KEYSLOT', engineQueueKey(databaseName, i))));
    const owner = await slotOwner(ask, slot);
    if (!owner || owner.replicas.length === 0) throw new Error(`no master with a replica serves slot ${slot}`);
    // The key is rebuilt here from fleet's naming: if that naming changed, this master holds no queue
    // and killing it would prove nothing, so the fault refuses to run instead.
    const tag = engineQueueKey(databaseName, i).replace(/:wait$/, '');
    const [, keys] = await askRedis(owner.master, (c) => c.scan('0', 'MATCH', `${tag}:*`, 'COUNT', 100_000));
    if (keys.length === 0) throw new Error(`no key of engine queue ${i} under ${tag} on master ${owner.master}: has the queues' naming changed?`);
    const seen = byMaster.get(owner.master);
    if (seen) seen.queues++;
    else byMaster.set(owner.master, { slot, queues: 1, ...owner });
  }
  return [...byMaster.values()].reduce((a, b) => (b.queues > a.queues ? b : a));
}

/**
 * SIGKILL the Redis master holding the most engine queues mid-load: its replica must take over (the
 * cluster's own failover, after cluster-node-timeout), and the nodes carry on through it. The killed
 * node is started again after the failover (as a supervisor would) and joins as a replica.
 */
const redisMasterKilled: Fault<ClusterFleet> = {
  name: 'SIGKILL a Redis master',
  does: 'kill -9 the Redis master holding the most engine queues; its replica takes over, the killed node is started again after the failover',
  async inject({ fleet, databaseName, ended }: FaultContext<ClusterFleet>): Promise<FaultWindow> {
    const owner = await busiestMaster(fleet, databaseName);
    const slot = owner.slot;
    const info = await askRedis(owner.master, (c) => c.info('server'));
    const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
    const start = Date.now();
    process.kill(pid, 'SIGKILL');
    while (alive(pid)) await sleep(20);
    // Failed over: one of its replicas serves the slot, as the cluster sees it from there.
    const deadline = start + 30_000;
    let takenBy: number | undefined;
    while (takenBy === undefined) {
      for (const replica of owner.replicas) {
        const now = await slotOwner(replica, slot).catch(() => undefined);
        const state = await askRedis(replica, (c) => c.cluster('INFO')).then(String, () => '');
        if (now?.master === replica && /cluster_state:ok/.test(state)) takenBy = replica;
      }
      if (takenBy === undefined && Date.now() > deadline) throw new Error(`no replica of ${owner.master} took over slot ${slot} in 30 s`);
      if (takenBy === undefined) await sleep(100);
    }
    const end = Date.now();
    ended(end);
    await startRedisCluster(fleet.layout);
    return { start, end, note: `master :${owner.master} (${owner.queues} engine queue${owner.queues === 1 ? '' : 's'}) killed; its replica :${takenBy} took over ${((end - start) / 1000).toFixed(1)} s later` };
  },
  evidence: (run) => run.window.note,
};

/** Stops the streaming replica (an immediate shutdown, as a crash), and starts it again: the API reads from the primary meanwhile. */
const postgresReplicaStopped: Fault<ClusterFleet> = {
  name: 'PostgreSQL replica stopped',
  does: `pg_ctl stop -m immediate the streaming replica (DATABASE_READ_URL), started again ${REPLICA_OUTAGE_MS / 1000} s later`,
  async inject({ fleet }: FaultContext<ClusterFleet>): Promise<FaultWindow> {
    const replica = new pg.Client({ connectionString: postgresUrl(fleet.layout.postgresReplicaPort, 'postgres') });
    await replica.connect();
    const dataDir = String((await replica.query('SHOW data_directory')).rows[0].data_directory);
    await replica.end();
    const start = Date.now();
    await run(join(PG_BIN, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop'], { asPostgres: true });
    await sleep(REPLICA_OUTAGE_MS);
    await startPostgresPair(fleet.layout); // starts what is not running: the replica
    return { start, end: Date.now(), note: 'the replica was down' };
  },
  evidence: (run) => (run.window.note && run.api.duringFault > 0 ? `the API answered ${run.api.duringFault} requests while the replica was down` : undefined),
};

/** HAProxy's view once the node is gone, for the window's note. */
const markedDown = (node: string) => async ({ fleet }: FaultContext<ClusterFleet>) =>
  `HAProxy marked ${node} down ${((await fleet.untilMarkedDown(node)) / 1000).toFixed(1)} s after the kill`;

/** The faults the suite injects into the local cluster, each into a run of its own; killed fleet nodes stay down. */
export const CLUSTER_FAULTS: Fault<ClusterFleet>[] = [
  redisMasterKilled,
  postgresReplicaStopped,
  killNode<ClusterFleet>('ingest-1', {
    watch: markedDown('ingest-1'),
    evidence(run) {
      const reconnected = run.trackers.filter((t) => t.reconnects > 0).length;
      return reconnected > 0 && run.window.note ? `${reconnected} trackers lost their connection and reconnected through HAProxy to ingest-2; ${run.window.note}` : undefined;
    },
  }),
  killNode<ClusterFleet>('engine-1', { withDeliveriesInFlight: true, evidence: diedWithDeliveriesInFlight }),
  killNode<ClusterFleet>('api-1', {
    watch: markedDown('api-1'),
    evidence: (run) => (run.window.note ? `${run.window.note}; ${run.api.failed} API requests failed` : undefined),
  }),
];
