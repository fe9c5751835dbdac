import type { ClusterLayout } from '../../deploy/local-cluster/cluster-layout.ts';
import { fleetNodes, nodeEnvironment, sharedEnvironment, stopFleetNode } from '../../deploy/local-cluster/fleet-nodes.ts';
import { haproxyServers } from '../../deploy/local-cluster/haproxy.ts';
import { askRedis } from '../../deploy/local-cluster/redis-cluster.ts';
import { DATABASE_NAME, postgresUrl } from '../../deploy/local-cluster/postgres-pair.ts';
import { FleetRoles, type FleetNodes } from './fleet-roles.ts';
import type { FleetEndpoints, FleetUnderTest } from './fleet-under-test.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The local cluster (deploy/local-cluster, brought up by its own `up`) as the fleet under test: two
 * ingest, two engine and two API nodes on the layout's ports, through PgBouncer to the primary with
 * reads from the streaming replica, on the Redis Cluster; trackers and API callers go through
 * HAProxy. The suite runs the nodes itself (the environment is the cluster's, from its own code), so
 * it sees their exit codes and logs. PgBouncer serves the `fleet` database only: each run's database
 * is `fleet`, made again from the template (on the primary, so the replica follows).
 */
export class ClusterFleet implements FleetUnderTest {
  readonly adminUrl: string;

  constructor(
    readonly layout: ClusterLayout,
    readonly templateDatabase: string,
  ) {
    this.adminUrl = postgresUrl(layout.postgresPrimaryPort, 'postgres');
  }

  runDatabaseName(): string {
    return DATABASE_NAME;
  }

  /** Stops the nodes `up` started, so that each run starts its own on the same ports. */
  async stopClusterNodes(): Promise<void> {
    await Promise.all(fleetNodes().map((node) => stopFleetNode(this.layout, node)));
  }

  async start(databaseName: string, env: Record<string, string>): Promise<FleetEndpoints & { roles: FleetRoles }> {
    if (databaseName !== DATABASE_NAME) throw new Error(`the local cluster's PgBouncer serves the ${DATABASE_NAME} database only, not ${databaseName}`);
    await this.flushRedis();
    const nodes: FleetNodes = Object.fromEntries(
      fleetNodes().map((node) => [node.name, { role: node.role, env: definedOnly({ ...sharedEnvironment(this.layout, env), ...nodeEnvironment(this.layout, node) }) }]),
    );
    const roles = new FleetRoles(nodes);
    try {
      await roles.startAll();
      await this.untilServed();
    } catch (error) {
      await roles.stopAll();
      throw error;
    }
    const port = (protocol: string) => this.layout.trackers.find((t) => t.protocol === protocol)!.public;
    return { roles, apiUrl: `http://127.0.0.1:${this.layout.apiPort}`, trackers: { host: '127.0.0.1', ports: { teltonika: port('teltonika'), gt06: port('gt06') } } };
  }

  /** FLUSHALL on every master (replicas follow; a master killed and started again is a replica now). */
  async flushRedis(): Promise<void> {
    for (const port of this.layout.redisPorts) {
      const role = await askRedis(port, (c) => c.role()).catch(() => undefined);
      if (role?.[0] === 'master') await askRedis(port, (c) => c.flushall());
    }
  }

  /** Until HAProxy counts every API and ingest node up (its checks: every second, up after two) and the API answers. */
  async untilServed(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const down = (await haproxyServers(this.layout).catch(() => [])).filter((s) => s.status !== 'UP' && s.backend !== 'stats');
      const ready = await fetch(`http://127.0.0.1:${this.layout.apiPort}/readyz`).then((r) => r.status === 200, () => false);
      if (down.length === 0 && ready) return;
      if (Date.now() > deadline) throw new Error(`HAProxy does not count every node up after ${timeoutMs} ms: ${down.map((s) => `${s.backend}/${s.server} ${s.status}`).join(', ') || 'GET /readyz failed'}`);
      await sleep(250);
    }
  }

  /** Until HAProxy has marked `server` down in every backend that has it; how long that took. */
  async untilMarkedDown(server: string, timeoutMs = 15_000): Promise<number> {
    const began = Date.now();
    for (;;) {
      const states = (await haproxyServers(this.layout)).filter((s) => s.server === server);
      if (states.length > 0 && states.every((s) => s.status.startsWith('DOWN'))) return Date.now() - began;
      if (Date.now() - began > timeoutMs) throw new Error(`HAProxy still counts ${server} up after ${timeoutMs} ms`);
      await sleep(100);
    }
  }
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}
