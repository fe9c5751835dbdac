import type { Config } from './config.ts';
import { openDatabase, type DatabaseHandle } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';

/**
 * Runs a CLI command against the configured database, migrated to the current schema. In embedded
 * mode it goes through a running server's socket when there is one, since PGlite allows one process.
 */
export async function withDatabase<T>(config: Config, run: (handle: DatabaseHandle) => Promise<T>): Promise<T> {
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, poolMode: config.databasePoolMode, dataDir: config.dataDir, embedded: 'share', poolSize: 2 });
  try {
    await migrateToLatest(handle.db);
    return await run(handle);
  } finally {
    await handle.close();
  }
}
