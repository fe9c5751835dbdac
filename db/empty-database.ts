import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type DatabaseHandle } from './database.ts';
import { adminPool, databaseUrlFor } from './postgres-admin.ts';

export interface EmptyDatabase extends DatabaseHandle {
  destroy(): Promise<void>;
}

/**
 * A database with no schema at all, on PGlite or on DATABASE_URL, for tests that migrate step by step
 * (the migrated template of test-database.ts is already at the latest migration). On PGlite it costs
 * the PostGIS initialisation, ~15 s.
 */
export async function openEmptyDatabase(): Promise<EmptyDatabase> {
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl) {
    const name = `fleetcore_empty_${process.pid}_${randomBytes(4).toString('hex')}`;
    const admin = adminPool(databaseUrl);
    await admin.query(`CREATE DATABASE ${name}`);
    const handle = await openDatabase({ databaseUrl: databaseUrlFor(databaseUrl, name), dataDir: '', embedded: 'own' });
    return {
      ...handle,
      async destroy() {
        await handle.close();
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      },
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-empty-'));
  const handle = await openDatabase({ databaseUrl: undefined, dataDir, embedded: 'own' });
  return {
    ...handle,
    async destroy() {
      await handle.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
