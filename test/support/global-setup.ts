import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../db/database.ts';
import { migrateToLatest } from '../../db/migrator.ts';
import { adminPool, databaseUrlFor, templateDatabaseName } from '../../db/postgres-admin.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Embedded: a migrated PGlite data directory that each test file copies. */
    templateDir: string;
    /** Real PostgreSQL: a migrated database that each test file clones. */
    templateDatabase: string;
  }
}

const root = resolve(import.meta.dirname, '../..');

/** Identifies the schema: a template made from other migrations or another PGlite build is not reused. */
function schemaDigest(): string {
  const hash = createHash('sha256');
  const dir = join(root, 'db/migrations');
  for (const file of readdirSync(dir).sort()) hash.update(file).update(readFileSync(join(dir, file)));
  for (const pkg of ['@electric-sql/pglite', '@electric-sql/pglite-postgis']) {
    hash.update(readFileSync(join(root, 'node_modules', pkg, 'package.json')));
  }
  return hash.digest('hex').slice(0, 16);
}

// PGlite with PostGIS takes ~15 s to initialise; pay it once per schema, not once per test file.
async function embeddedTemplate(): Promise<string> {
  const cache = join(root, 'node_modules/.cache/fleetcore');
  const dir = join(cache, `pglite-template-${schemaDigest()}`);
  if (existsSync(join(dir, 'pgdata', 'PG_VERSION'))) return dir;
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const handle = await openDatabase({ databaseUrl: undefined, dataDir: building, embedded: 'own' });
  await migrateToLatest(handle.db);
  await handle.close();
  rmSync(dir, { recursive: true, force: true });
  renameSync(building, dir);
  return dir;
}

export default async function setup(project: TestProject) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    project.provide('templateDir', await embeddedTemplate());
    project.provide('templateDatabase', '');
    return;
  }
  const name = templateDatabaseName();
  const admin = adminPool(databaseUrl);
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const handle = await openDatabase({ databaseUrl: databaseUrlFor(databaseUrl, name), dataDir: '', embedded: 'share', poolSize: 1 });
  await migrateToLatest(handle.db);
  await handle.close();
  project.provide('templateDir', '');
  project.provide('templateDatabase', name);
  return async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  };
}

