import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../db/database.ts';
import { adminPool, databaseUrlFor } from '../../db/postgres-admin.ts';

export interface TestDatabase extends DatabaseHandle {
  /** Configuration a spawned `fleet` process needs to reach the same data. */
  env: Record<string, string>;
  /** Closes the database and deletes everything it held. */
  destroy(): Promise<void>;
}

/** A database of this test file's own: a clone of the migrated template, on PGlite or on DATABASE_URL. */
export async function openTestDatabase(): Promise<TestDatabase> {
  const databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl) {
    const name = `fleetcore_test_${process.pid}_${randomBytes(4).toString('hex')}`;
    const admin = adminPool(databaseUrl);
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`);
    const url = databaseUrlFor(databaseUrl, name);
    const handle = await openDatabase({ databaseUrl: url, dataDir: '', embedded: 'own' });
    return {
      ...handle,
      env: { DATABASE_URL: url },
      async destroy() {
        await handle.close();
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      },
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-test-'));
  cpSync(inject('templateDir'), dataDir, { recursive: true });
  const handle = await openDatabase({ databaseUrl: undefined, dataDir, embedded: 'own' });
  return {
    ...handle,
    env: { DATA_DIR: dataDir },
    async destroy() {
      await handle.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
