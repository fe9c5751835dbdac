import pg from 'pg';

/** A connection to the server of DATABASE_URL for creating and dropping per-run databases. */
export function adminPool(databaseUrl: string): pg.Pool {
  return new pg.Pool({ connectionString: databaseUrl, max: 2 });
}

export function templateDatabaseName(): string {
  return `fleetcore_tmpl_${process.pid}`;
}

export function databaseUrlFor(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
