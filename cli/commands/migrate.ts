import { openDatabase } from '../../db/database.ts';
import { migrateToLatest } from '../../db/migrator.ts';
import { parseCommand } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';

export const migrateUsage = 'fleet migrate [--json]';

export async function migrateCommand(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, {});
  const handle = await openDatabase({ databaseUrl: config.databaseUrl, poolMode: config.databasePoolMode, dataDir: config.dataDir, embedded: 'share', poolSize: 1 });
  try {
    const applied = await migrateToLatest(handle.db);
    printResult(
      parsed.json,
      { database: handle.description, applied },
      applied.length > 0 ? `applied ${applied.join(', ')} on ${handle.description}` : `schema is current on ${handle.description}`,
    );
  } finally {
    await handle.close();
  }
}
