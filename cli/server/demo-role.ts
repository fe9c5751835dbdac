import { countAccounts } from '../../db/accounts.ts';
import type { DatabaseHandle } from '../../db/database.ts';
import { startDemoFleet } from '../../simulators/demo-fleet.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { Config } from '../config.ts';
import { DEMO_EMAIL, demoInstructions, seedDemo } from '../demo-seed.ts';
import { demoSignIn, setDemoPassword } from '../commands/demo.ts';

async function shouldSeedDemo(config: Config, handle: DatabaseHandle): Promise<boolean> {
  if (config.demoSeed === 'false') return false;
  if (config.demoSeed === 'auto' && handle.kind !== 'embedded') return false;
  return (await countAccounts(handle.db)) === 0;
}

/**
 * The demo: seeded into an empty database (on the embedded default unless told otherwise), and its
 * vehicles driven by simulated Teltonika trackers against this server's own port.
 */
export async function startDemo(
  config: Config,
  log: Logger,
  deps: { database: DatabaseHandle; apiUrl: string; teltonikaPort: number | undefined },
): Promise<{ instructions: string[] | undefined; stop(): Promise<void> }> {
  const { database } = deps;
  let instructions: string[] | undefined;
  if (await shouldSeedDemo(config, database)) {
    const seed = await seedDemo(database.db);
    // The demo user signs in to the console with a password printed once, so a first API key needs no shell.
    instructions = [...demoInstructions(seed, deps.apiUrl), '', demoSignIn(deps.apiUrl, await setDemoPassword(database.db, seed.userId))];
  }
  const simulate = config.demoSimulate === 'true' || (config.demoSimulate === 'auto' && database.kind === 'embedded');
  const fleet = simulate && deps.teltonikaPort ? await startDemoFleet(database.db, DEMO_EMAIL, deps.teltonikaPort) : undefined;
  if (fleet) log.info('demo vehicles are driving (simulated Teltonika trackers); DEMO_SIMULATE=false stops that');
  return { instructions, stop: async () => fleet?.stop() };
}
