import { mkdtempSync, rmSync } from 'node:fs';
import { sql } from 'kysely';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { hashApiKey, issueApiKey } from '../api/auth/api-key-token.ts';
import { issueAccessToken, issueClientCredentials } from '../api/auth/oauth-credentials.ts';
import { findKeysByPrefix, insertApiKey } from '../db/api-keys.ts';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { insertOauthClient } from '../db/oauth-clients.ts';
import { findOauthToken, insertOauthToken } from '../db/oauth-tokens.ts';
import { summarise } from '../simulators/latency-stats.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { serveBenchApi } from './bench-api-server.ts';

const CONCURRENCY = 32;
const DURATION_MS = 6_000;
const LOOKUPS = 5_000;
const OTHER_CREDENTIALS = 10_000;

function hammer(url: string, key: string): Promise<{ perSecond: number; latencies: number[]; errors: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./http-load.js', import.meta.url), { workerData: { url, key, concurrency: CONCURRENCY, durationMs: DURATION_MS } });
    worker.once('message', (result: { latencies: number[]; errors: number; elapsedMs: number }) => {
      resolve({ perSecond: result.latencies.length / (result.elapsedMs / 1000), latencies: result.latencies, errors: result.errors });
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

/**
 * What authenticating a request costs, an API key against an OAuth access token, among 10,000 other
 * keys and 10,000 other tokens: the lookup alone (5,000 in a row, µs each), and `GET
 * /devices/{id}/status` over real HTTP with 32 concurrent clients for 6 s each. Embedded by default,
 * PostgreSQL with DATABASE_URL.
 */
export default async function authBench(args: string[]): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-auth-'));
  const handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, embedded: 'own' });
  try {
    await migrateToLatest(handle.db);
    const db = handle.db;
    const f = fixtures(db);
    const { account, user, key } = await f.tenant();
    const device = await f.device(account.id, { userIds: [user.id] });
    await f.fix(device.id, { fixTime: new Date(), valid: true, latitude: 19.4, longitude: -99.1, speedKmh: 30, ignition: true });
    const client = await insertOauthClient(db, { ...clientFields(), userId: user.id, mode: 'live', name: 'bench', scopes: ['*'], expiresAt: null });
    const issued = issueAccessToken();
    await insertOauthToken(db, { tokenHash: issued.hash, clientId: client.id, scopes: ['*'], expiresAt: new Date(Date.now() + 3_600_000) });
    // Other credentials in the tables, as a deployment has.
    for (let i = 0; i < OTHER_CREDENTIALS; i += 1_000) {
      await db.insertInto('api_keys').values(Array.from({ length: 1_000 }, () => {
        const k = issueApiKey('live');
        return { user_id: user.id, prefix: k.prefix, key_hash: k.hash, mode: 'live' as const, permissions: ['*'] };
      })).execute();
      await db.insertInto('oauth_tokens').values(Array.from({ length: 1_000 }, () => ({
        token_hash: issueAccessToken().hash, client_id: client.id, scopes: ['*'], expires_at: new Date(Date.now() + 3_600_000),
      }))).execute();
    }
    // Planned as a deployment's would be (PGlite runs no autovacuum to do it).
    await sql`ANALYZE api_keys`.execute(db);
    await sql`ANALYZE oauth_tokens`.execute(db);

    const lookup = async (find: () => Promise<unknown>) => {
      for (let i = 0; i < 200; i++) await find();
      const t0 = performance.now();
      for (let i = 0; i < LOOKUPS; i++) await find();
      return ((performance.now() - t0) * 1000) / LOOKUPS;
    };
    const keyPrefix = key.slice(0, 14);
    const keyLookupUs = await lookup(() => findKeysByPrefix(db, keyPrefix).then((rows) => rows.find((r) => r.key_hash === hashApiKey(key))));
    const tokenLookupUs = await lookup(() => findOauthToken(db, { hash: hashApiKey(issued.token) }));

    const server = await serveBenchApi(db);
    const url = `${server.base}/devices/${device.imei}/status`;
    const rows = [];
    for (const [credential, secret, lookupUs] of [['API key', key, keyLookupUs], ['OAuth access token', issued.token, tokenLookupUs]] as const) {
      const load = await hammer(url, secret);
      const lat = summarise(load.latencies);
      rows.push({ credential, lookupUs: Math.round(lookupUs), perSecond: Math.round(load.perSecond), p50: +lat.p50.toFixed(1), p99: +lat.p99.toFixed(1), errors: load.errors });
    }
    server.close();
    if (args.includes('--json')) process.stdout.write(`${JSON.stringify(rows)}\n`);
    else {
      process.stdout.write(`| credential (${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded'}) | lookup µs | GET /devices/{id}/status req/s | p50 / p99 ms | errors |\n|---|---|---|---|---|\n`);
      for (const r of rows) process.stdout.write(`| ${r.credential} | ${r.lookupUs} | ${r.perSecond} | ${r.p50} / ${r.p99} | ${r.errors} |\n`);
    }
  } finally {
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function clientFields() {
  const c = issueClientCredentials();
  return { clientId: c.clientId, secretHash: c.secretHash };
}
