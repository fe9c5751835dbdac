import type { FleetRoles } from './fleet-roles.ts';

/** Where a run's clients go: the trackers, and the API's callers. */
export interface FleetEndpoints {
  apiUrl: string;
  trackers: { host: string; ports: { teltonika: number; gt06: number } };
}

/**
 * The fleet under test: the PostgreSQL, the Redis and the `fleet serve` processes a run drives. The
 * three-process setup on one Redis (process-fleet.ts) or the local cluster behind HAProxy
 * (cluster-fleet.ts); runFleet and the checks are the same for both.
 */
export interface FleetUnderTest {
  /** A superuser's URL on the PostgreSQL where each run's database is made from `templateDatabase`, and dropped after. */
  readonly adminUrl: string;
  readonly templateDatabase: string;
  /** The name of the next run's database. */
  runDatabaseName(): string;
  /**
   * Empties Redis and starts the processes on `databaseName`, with `env` (the run's settings) over
   * their own; resolves once clients can reach them. On failure nothing it started is left running.
   */
  start(databaseName: string, env: Record<string, string>): Promise<FleetEndpoints & { roles: FleetRoles }>;
}
