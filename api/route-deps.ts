import type { Logger } from '../cli/logger.ts';
import type { Db } from '../db/database.ts';
import type { DeviceStatusThresholds } from '../engine/device-status.ts';

/** What the route modules need, passed in rather than imported, so tests build the app on any database. */
export interface RouteDeps {
  db: Db;
  log: Logger;
  config: {
    deviceStatus: DeviceStatusThresholds;
    onTimeToleranceMinutes: number;
  };
}
