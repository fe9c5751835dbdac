import { randomBytes } from 'node:crypto';
import { databaseUrlFor } from '../../db/postgres-admin.ts';
import { freePort } from '../support/fleet-process.ts';
import { FleetRoles, oneNodePerRole } from './fleet-roles.ts';
import type { FleetEndpoints, FleetUnderTest } from './fleet-under-test.ts';
import type { RedisServerProcess } from './redis-server-process.ts';

/**
 * `fleet serve --roles ingest`, `--roles engine` and `--roles api` on PostgreSQL and a Redis of the
 * suite's own, each run on a database of its own, its ports free ones; trackers and API callers
 * connect to the processes directly.
 */
export class ProcessFleet implements FleetUnderTest {
  constructor(
    readonly adminUrl: string,
    readonly templateDatabase: string,
    readonly redis: RedisServerProcess,
  ) {}

  runDatabaseName(): string {
    return `fleetcore_faults_${process.pid}_${randomBytes(3).toString('hex')}`;
  }

  async start(databaseName: string, env: Record<string, string>): Promise<FleetEndpoints & { roles: FleetRoles }> {
    await this.redis.flushAll();
    const [apiPort, teltonika, gt06] = [await freePort(), await freePort(), await freePort()];
    const roles = new FleetRoles(oneNodePerRole({
      DATABASE_URL: databaseUrlFor(this.adminUrl, databaseName), REDIS_URL: this.redis.url, PORT: String(apiPort), HOST: '127.0.0.1',
      TELTONIKA_PORT: String(teltonika), GT06_PORT: String(gt06), ...env,
    }));
    await roles.startAll().catch(async (error: unknown) => {
      await roles.stopAll();
      throw error;
    });
    return { roles, apiUrl: `http://127.0.0.1:${apiPort}`, trackers: { host: '127.0.0.1', ports: { teltonika, gt06 } } };
  }
}
