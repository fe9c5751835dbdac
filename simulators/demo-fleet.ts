import type { Db } from '../db/database.ts';
import { accountImeis } from '../db/devices.ts';
import { findUser } from '../db/users.ts';
import { startFleetSimulation } from './fleet-simulation.ts';
import { geofenceStops } from './simulated-devices.ts';
import { teltonikaDialect } from './tracker-dialect.ts';
import type { VirtualTracker } from './virtual-tracker.ts';

const DEMO_INTERVAL_MS = 5_000;

/**
 * Makes the demo account's live vehicles move: one virtual Teltonika tracker each, reporting every
 * 5 s to this server's own Teltonika port and driving between the demo geofences. Undefined when
 * there is no demo account.
 */
export async function startDemoFleet(db: Db, demoEmail: string, teltonikaPort: number): Promise<{ stop(): Promise<void> } | undefined> {
  const user = await findUser(db, demoEmail);
  if (!user) return undefined;
  const imeis = await accountImeis(db, user.account_id, 'live');
  const stops = await geofenceStops(db, user.account_id);
  if (imeis.length === 0) return undefined;
  const trackers: VirtualTracker[] = startFleetSimulation({
    imeis,
    dialect: teltonikaDialect,
    server: { host: '127.0.0.1', port: teltonikaPort },
    intervalMs: DEMO_INTERVAL_MS,
    seed: 2024,
    stops,
    center: { latitude: 19.4326, longitude: -99.1332 },
  });
  return { stop: async () => void (await Promise.all(trackers.map((t) => t.stop(2_000)))) };
}
