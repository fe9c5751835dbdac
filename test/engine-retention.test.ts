import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GeofenceCatalog } from '../engine/geofence-catalog.ts';
import { pruneEngineHistory } from '../engine/workers/prune-history.ts';
import { insertOauthClient } from '../db/oauth-clients.ts';
import { insertOauthToken } from '../db/oauth-tokens.ts';
import { silentLogger } from '../runtime/logger.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database?.destroy();
});

const DAY = 86_400_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe('pruning what the engine has finished with', () => {
  it('deletes geofence changes and late-fix entries past their retention', async () => {
    const make = fixtures(database.db);
    const { account } = await make.tenant();
    const device = await make.device(account.id);
    const fence = await make.geofence(account.id, 'Yard', { kind: 'circle', lat: 19.4, lng: -99.1, radiusMeters: 100 });
    await sql`UPDATE geofence_changes SET changed_at = ${ago(3 * DAY)}`.execute(database.db);
    await database.db.updateTable('geofences').set({ name: 'Yard 2' }).where('id', '=', fence.id).execute(); // a recent change
    await sql`INSERT INTO positions (device_id, fix_time, valid, latitude, longitude) VALUES (${device.id}, now(), true, 19.4, -99.1)`.execute(database.db);
    await sql`INSERT INTO late_fixes (device_id, fix_time, received_at) VALUES (${device.id}, ${ago(20 * DAY)}, ${ago(10 * DAY)}), (${device.id}, ${ago(DAY)}, now())`.execute(database.db);

    // OAuth access tokens: one expired two days ago goes, one expired an hour ago stays a day, a live one stays.
    const user = await make.user(account.id);
    const client = await insertOauthClient(database.db, { clientId: `fcc_retention_${process.pid}`, secretHash: 'x', userId: user.id, mode: 'live', name: null, scopes: ['*'], expiresAt: null });
    for (const [n, expiresAt] of [[1, new Date(ago(2 * DAY))], [2, new Date(ago(3_600_000))], [3, new Date(Date.now() + 3_600_000)]] as const) {
      await insertOauthToken(database.db, { tokenHash: `retention-${process.pid}-${n}`, clientId: client.id, scopes: ['*'], expiresAt });
    }

    const pruned = await pruneEngineHistory(database.db, { geofenceChangesMs: DAY, lateFixesMs: 7 * DAY });
    expect(pruned).toEqual({ geofenceChanges: 1, lateFixes: 1, events: 0, webhookDeliveries: 0, oauthTokens: 1, media: 0 });
    expect(await database.db.selectFrom('geofence_changes').select('id').execute()).toHaveLength(1);
    expect(await database.db.selectFrom('oauth_tokens').select('token_hash').where('client_id', '=', client.id).orderBy('token_hash').execute()).toEqual([
      { token_hash: `retention-${process.pid}-2` }, { token_hash: `retention-${process.pid}-3` },
    ]);
    expect(await pruneEngineHistory(database.db, { geofenceChangesMs: DAY, lateFixesMs: 7 * DAY })).toEqual({ geofenceChanges: 0, lateFixes: 0, events: 0, webhookDeliveries: 0, oauthTokens: 0, media: 0 });
  });

  it('leaves the geofence catalog working: it loads, and follows changes made after a prune', async () => {
    const make = fixtures(database.db);
    const { account } = await make.tenant();
    await make.geofence(account.id, 'Before', { kind: 'circle', lat: 19.4, lng: -99.1, radiusMeters: 100 });
    await pruneEngineHistory(database.db, { geofenceChangesMs: 1, lateFixesMs: DAY }, new Date(Date.now() + 1_000));
    expect(await database.db.selectFrom('geofence_changes').select('id').execute()).toEqual([]);
    const catalog = await GeofenceCatalog.open(database.db, silentLogger, database.pool, { pollMs: 60_000 });
    try {
      expect(catalog.index(account.id, 'live')?.size).toBe(1);
      const after = await make.geofence(account.id, 'After', { kind: 'circle', lat: 19.5, lng: -99.2, radiusMeters: 100 });
      await catalog.refresh();
      expect(catalog.index(account.id, 'live')?.has(after.id)).toBe(true);
    } finally {
      await catalog.close();
    }
  });

  it('leaves no change unread by a catalog that stalled longer than the log keeps changes: it reloads every geofence instead', async () => {
    const make = fixtures(database.db);
    const { account } = await make.tenant();
    const gone = await make.geofence(account.id, 'Gone', { kind: 'circle', lat: 19.4, lng: -99.1, radiusMeters: 100 });
    let clock = Date.now();
    const catalog = await GeofenceCatalog.open(database.db, silentLogger, undefined, { pollMs: 60_000, reloadAfterMs: 3_600_000, now: () => clock });
    try {
      expect(catalog.index(account.id, 'live')?.has(gone.id)).toBe(true);
      // This process stalls (or cannot reach the database) while the geofences change and another
      // engine process prunes the log past the changes.
      const added = await make.geofence(account.id, 'Added', { kind: 'circle', lat: 19.5, lng: -99.2, radiusMeters: 100 });
      await database.db.deleteFrom('geofences').where('id', '=', gone.id).execute();
      await pruneEngineHistory(database.db, { geofenceChangesMs: 1, lateFixesMs: DAY }, new Date(Date.now() + 1_000));
      clock += 2 * 3_600_000;
      await catalog.refresh();
      expect(catalog.index(account.id, 'live')?.has(added.id)).toBe(true);
      expect(catalog.index(account.id, 'live')?.has(gone.id)).toBe(false);
      // And it follows the log again from there.
      const next = await make.geofence(account.id, 'Next', { kind: 'circle', lat: 19.6, lng: -99.3, radiusMeters: 100 });
      await catalog.refresh();
      expect(catalog.index(account.id, 'live')?.has(next.id)).toBe(true);
    } finally {
      await catalog.close();
    }
  });
});
