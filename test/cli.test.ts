import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertApiKey } from '../db/api-keys.ts';
import { teltonikaCodec8, teltonikaLogin } from '../simulators/teltonika-packets.ts';
import { environment, FLEET, freePort, freshDatabase, root, serve, type Serving } from './support/fleet-process.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// The `fleet` command as a user runs it: real processes, this file's own database. In embedded mode
// the database is open in this process and a spawned command reaches it through the socket in
// DATA_DIR, as it would reach a running server.

const TOUR = join(root, 'test/curl-tour.sh');

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

let database: TestDatabase;
let fixture: ReturnType<typeof fixtures>;
let files: string;

// Only the commands under test run as processes (each costs seconds); the rest is set up in the database.
beforeAll(async () => {
  database = await openTestDatabase();
  fixture = fixtures(database.db);
  files = mkdtempSync(join(tmpdir(), 'fleetcore-cli-files-'));
});
afterAll(async () => {
  await database?.destroy();
  if (files) rmSync(files, { recursive: true, force: true });
});

function run(file: string, args: string[], env: NodeJS.ProcessEnv, timeout = 90_000): Promise<Run> {
  return new Promise((done) => {
    execFile(file, args, { cwd: root, env, timeout, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const failure = error as (Error & { code?: unknown; signal?: NodeJS.Signals | null }) | null;
      done({
        code: failure ? (typeof failure.code === 'number' ? failure.code : null) : 0,
        signal: failure?.signal ?? null,
        stdout,
        stderr,
      });
    });
  });
}

/** Runs `fleet ARGS` against this file's database (or the one `env` names). */
function fleet(args: string[], env: Record<string, string> = database.env): Promise<Run> {
  return run(process.execPath, [FLEET, ...args], environment(env));
}

/** The parsed `--json` output of a run that must have succeeded. */
function json(result: Run): any {
  expect(result.code, `exit ${result.code}; stderr: ${result.stderr}`).toBe(0);
  return JSON.parse(result.stdout);
}

/** A failed run: its exit code and a stderr of one line with no stack trace. */
function expectFailure(result: Run, code: number, message: string | RegExp) {
  expect(result.code, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe(code);
  expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stderr).not.toContain('unexpected error');
}

function expectUsageError(result: Run, message: string | RegExp, usage: string) {
  expectFailure(result, 2, message);
  expect(result.stderr).toContain(`usage: ${usage}`);
}

function expectOneLineError(result: Run, message: string | RegExp) {
  expectFailure(result, 1, message);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).not.toContain('usage:');
}

let sequence = 0;
function geoJsonFile(doc: unknown): string {
  const path = join(files, `geofences-${++sequence}.geojson`);
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

const countGeofences = async (accountId: number) =>
  (await database.db.selectFrom('geofences').select('id').where('account_id', '=', accountId).execute()).length;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('fleet', () => {
  it('answers an unknown command with exit 2 and the list of commands', async () => {
    const unknown = await fleet(['fly']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "fly"');
    expect(unknown.stderr).toContain('fleet device add');
    expect(unknown.stderr).toContain('fleet geofence import');
  }, 60_000);

  it('fails on an unreachable DATABASE_URL with one line saying it cannot connect', async () => {
    const result = await fleet(['serve'], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/x', PORT: '0' });
    expectOneLineError(result, /^fleet serve: cannot connect to DATABASE_URL postgres:\/\/nobody@127\.0\.0\.1:1\/x/);
    expect(result.stdout).toBe('');
  }, 60_000);
});

describe('fleet account and user', () => {
  it('creates an account and users; rejects a bad email or timezone (exit 2) and an unknown account (exit 1)', async () => {
    const account = json(await fleet(['account', 'create', '--name', 'Transportes Norte', '--json']));
    expect(account).toEqual({ id: expect.any(Number), name: 'Transportes Norte', speedLimitKmh: null });
    const row = await database.db.selectFrom('accounts').selectAll().where('id', '=', account.id).executeTakeFirst();
    expect(row?.name).toBe('Transportes Norte');

    const usage = 'fleet user create --account ID --email EMAIL --timezone IANA_ZONE [--name NAME] [--role ROLE] [--json]';
    const base = ['user', 'create', '--account', String(account.id)];
    const [created, badEmail, badZone, unknownAccount] = await Promise.all([
      fleet([...base, '--email', 'Ana.Dispatch@Example.test', '--timezone', 'America/Monterrey', '--name', 'Ana', '--json']),
      fleet([...base, '--email', 'not-an-email', '--timezone', 'America/Monterrey']),
      fleet([...base, '--email', 'mars@example.test', '--timezone', 'Mars/Base']),
      fleet(['user', 'create', '--account', '999999', '--email', 'ghost@example.test', '--timezone', 'UTC']),
    ]);
    expect(json(created)).toEqual({
      id: expect.any(Number),
      accountId: account.id,
      email: 'ana.dispatch@example.test',
      name: 'Ana',
      timezone: 'America/Monterrey',
      role: 'owner',
      // A one-time link to set the first password (docs/api/sessions.md), at the server's address.
      setPasswordUrl: expect.stringMatching(/^http:\/\/localhost:\d+\/map\/set-password#token=[A-Za-z0-9_-]+$/),
    });
    expectUsageError(badEmail, '--email "not-an-email" is not an email address', usage);
    expectUsageError(badZone, '--timezone "Mars/Base" is not an IANA timezone', usage);
    expectOneLineError(unknownAccount, 'fleet user: account 999999 does not exist');

    const users = await database.db.selectFrom('users').select('email').where('account_id', '=', account.id).execute();
    expect(users.map((u) => u.email)).toEqual(['ana.dispatch@example.test']);
  }, 120_000);
});

describe('fleet oauth-client', () => {
  it('registers a client whose secret is shown once and kept as a hash, revokes it once, and audits both', async () => {
    const user = await fixture.user((await fixture.account()).id, 'UTC');
    const created = json(await fleet(['oauth-client', 'create', '--user', user.email, '--scopes', 'vehicles:read,events:read', '--name', 'TMS', '--json']));
    expect(created).toEqual({
      id: expect.any(Number), clientId: expect.stringMatching(/^fcc_[0-9A-Za-z]{20}$/), clientSecret: expect.stringMatching(/^fcs_[0-9A-Za-z]{40}$/),
      userId: user.id, mode: 'live', scopes: ['vehicles:read', 'events:read'], expiresAt: null,
    });
    const row = await database.db.selectFrom('oauth_clients').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.secret_hash).toBe(sha256(created.clientSecret));
    expect(JSON.stringify(row)).not.toContain(created.clientSecret);

    const revoked = json(await fleet(['oauth-client', 'revoke', created.clientId, '--json']));
    expect(revoked).toEqual({ id: created.id, clientId: created.clientId, revokedAt: expect.any(String), mintedRevoked: 0 });
    expectOneLineError(await fleet(['oauth-client', 'revoke', String(created.id)]), new RegExp(`^fleet oauth-client: OAuth client ${created.id} \\(${created.clientId}\\) is already revoked, since `));
    const audit = await database.db.selectFrom('audit_log').select(['action', 'actor_kind']).where('target_type', '=', 'oauth_client').where('target_id', '=', String(created.id)).orderBy('id').execute();
    expect(audit).toEqual([{ action: 'oauth_client.created', actor_kind: 'cli' }, { action: 'oauth_client.revoked', actor_kind: 'cli' }]);

    const badScope = await fleet(['oauth-client', 'create', '--user', user.email, '--scopes', 'vehicles:drive']);
    expect(badScope.code).toBe(2);
    expect(badScope.stderr).toMatch(/unknown scope "vehicles:drive"/);
  }, 90_000);
});

describe('fleet key', () => {
  let userId: number;
  let email: string;

  beforeAll(async () => {
    const user = await fixture.user((await fixture.account()).id, 'UTC');
    ({ id: userId, email } = user);
  });

  it('creates a live key with every permission, printed once and stored only as a hash', async () => {
    const result = await fleet(['key', 'create', '--user', email]);
    expect(result.code, result.stderr).toBe(0);
    const keys = result.stdout.match(/fc_live_[A-Za-z0-9]{32}/g);
    expect(keys).toHaveLength(1);
    expect(result.stdout).toContain('shown only once');
    const key = keys![0]!;

    const row = await database.db.selectFrom('api_keys').selectAll().where('prefix', '=', key.slice(0, 14)).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ user_id: userId, mode: 'live', permissions: ['*'], expires_at: null, revoked_at: null });
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.key_hash).not.toBe(key);
    expect(row.key_hash).toBe(sha256(key));
    expect(JSON.stringify(row)).not.toContain(key);
  }, 60_000);

  it('creates a test key that expires in 30 days with only the listed permissions', async () => {
    const before = Date.now();
    const created = json(
      await fleet(['key', 'create', '--user', String(userId), '--mode', 'test', '--expires', '30d', '--permissions', 'devices:read,geofences:read', '--name', 'ci', '--json']),
    );
    const after = Date.now();
    expect(created).toEqual({
      id: expect.any(Number),
      key: expect.stringMatching(/^fc_test_[A-Za-z0-9]{32}$/),
      prefix: expect.any(String),
      userId,
      mode: 'test',
      permissions: ['devices:read', 'geofences:read'],
      expiresAt: expect.any(String),
    });
    expect(created.key.startsWith(created.prefix)).toBe(true);
    expect(created.prefix).toMatch(/^fc_test_/);
    const expires = new Date(created.expiresAt).getTime();
    expect(expires).toBeGreaterThanOrEqual(before + 30 * 86_400_000 - 1000);
    expect(expires).toBeLessThanOrEqual(after + 30 * 86_400_000 + 1000);

    const row = await database.db.selectFrom('api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ mode: 'test', name: 'ci', permissions: ['devices:read', 'geofences:read'], key_hash: sha256(created.key) });
    expect(row.expires_at?.toISOString()).toBe(created.expiresAt);
  }, 60_000);

  it('rejects an unknown permission with exit 2 and an unknown user with exit 1', async () => {
    const before = await database.db.selectFrom('api_keys').select('id').execute();
    const [permission, noUser] = await Promise.all([
      fleet(['key', 'create', '--user', email, '--permissions', 'devices:read,devices:write']),
      fleet(['key', 'create', '--user', 'nobody@example.test']),
    ]);
    expectUsageError(permission, 'unknown permission "devices:write"', 'fleet key create');
    expectOneLineError(noUser, 'fleet key: user nobody@example.test does not exist');
    expect(await database.db.selectFrom('api_keys').select('id').execute()).toHaveLength(before.length);
  }, 60_000);

  it('revokes a key by id, once', async () => {
    const [key, other] = [await fixture.key(userId), await fixture.key(userId)];
    const revoked = json(await fleet(['key', 'revoke', String(key.id), '--json']));
    expect(revoked).toEqual({ id: key.id, prefix: key.prefix, revokedAt: expect.any(String), mintedRevoked: 0 });
    const rows = await database.db.selectFrom('api_keys').select(['id', 'revoked_at']).where('id', 'in', [key.id, other.id]).orderBy('id').execute();
    expect(rows).toEqual([
      { id: key.id, revoked_at: new Date(revoked.revokedAt) },
      { id: other.id, revoked_at: null },
    ]);

    expectOneLineError(await fleet(['key', 'revoke', String(key.id)]), new RegExp(`^fleet key: API key ${key.id} \\(.+…\\) is already revoked, since `));
    // The operator's revocation is in the account's audit log, once.
    const audit = await database.db.selectFrom('audit_log').select(['action', 'actor_kind', 'user_id', 'remote_address']).where('target_id', '=', String(key.id)).where('target_type', '=', 'api_key').execute();
    expect(audit).toEqual([{ action: 'api_key.revoked', actor_kind: 'cli', user_id: userId, remote_address: null }]);
  }, 90_000);

  it('refuses an ambiguous prefix in one line that names the keys, and revokes none', async () => {
    // Prefixes are a key's first characters, so two keys may share one: made so here by hand.
    const shared = 'fc_live_Shared9';
    const withShared = (name: string) =>
      insertApiKey(database.db, { userId, prefix: shared, keyHash: `cli-shared-${process.pid}-${name}`, mode: 'live', permissions: ['*'], name });
    const [a, b] = [await withShared('first'), await withShared('second')];
    const listed = (k: { id: number; name: string | null }) => `${k.id} \\(user ${email}, "${k.name}", created [^)]+\\)`;
    expectOneLineError(
      await fleet(['key', 'revoke', shared]),
      new RegExp(`^fleet key: prefix "${shared}" matches 2 keys, so none was revoked; revoke one by id: ${listed(a)}; ${listed(b)}\\n?$`),
    );
    const left = await database.db.selectFrom('api_keys').select('id').where('prefix', '=', shared).where('revoked_at', 'is', null).execute();
    expect(left).toHaveLength(2);
  }, 90_000);
});

describe('fleet device add', () => {
  it('adds a test-mode device visible to the users named by email; a duplicate IMEI fails with exit 1', async () => {
    const account = await fixture.account();
    const accountArg = String(account.id);
    const [ana, ben] = [await fixture.user(account.id), await fixture.user(account.id)];
    const imei = `35${Date.now()}`.slice(0, 15);
    const added = json(
      await fleet(['device', 'add', '--account', accountArg, '--imei', imei, '--name', 'Test Rig', '--plates', 'TST-001', '--users', ana.email.toUpperCase(), '--mode', 'test', '--protocol', 'teltonika', '--json']),
    );
    expect(added).toEqual({
      id: expect.any(Number),
      accountId: account.id,
      imei,
      name: 'Test Rig',
      plates: 'TST-001',
      mode: 'test',
      protocol: 'teltonika',
      speedLimitKmh: null,
      userIds: [ana.id],
    });
    const grants = await database.db.selectFrom('user_devices').select('user_id').where('device_id', '=', added.id).execute();
    expect(grants.map((g) => g.user_id)).toEqual([ana.id]);
    expect(ben.id).not.toBe(ana.id);

    const duplicate = await fleet(['device', 'add', '--account', accountArg, '--imei', imei, '--name', 'Other', '--plates', 'X', '--json']);
    expectOneLineError(duplicate, `fleet device: a device with IMEI ${imei} already exists`);
    const devices = await database.db.selectFrom('devices').select('name').where('account_id', '=', account.id).execute();
    expect(devices.map((d) => d.name)).toEqual(['Test Rig']);
  }, 120_000);
});

describe('fleet geofence import', () => {
  const square = (lng: number, lat: number, half: number) => [
    [[lng - half, lat - half], [lng + half, lat - half], [lng + half, lat + half], [lng - half, lat + half], [lng - half, lat - half]],
  ];
  const polygon = { type: 'Feature', properties: { name: 'Yard A' }, geometry: { type: 'Polygon', coordinates: square(-99.15, 19.45, 0.002) } };
  const multi = {
    type: 'Feature',
    properties: { name: 'Twin Lots' },
    geometry: { type: 'MultiPolygon', coordinates: [square(-99.2, 19.4, 0.001), square(-99.19, 19.4, 0.003)] },
  };
  const circle = { type: 'Feature', properties: { name: 'Gate', radius: 150 }, geometry: { type: 'Point', coordinates: [-99.1, 19.42] } };
  const collection = (...features: unknown[]) => ({ type: 'FeatureCollection', features });

  it('imports nothing from a file with an invalid feature, then all three shapes of a good file', async () => {
    const account = await fixture.account();
    const accountArg = String(account.id);
    const line = { type: 'Feature', properties: { name: 'Highway' }, geometry: { type: 'LineString', coordinates: [[0, 0], [1, 1]] } };
    // A bow tie: valid GeoJSON that PostGIS rejects, after the first feature was already inserted.
    const bowTie = {
      type: 'Feature',
      properties: { name: 'Bow Tie' },
      geometry: { type: 'Polygon', coordinates: [[[-99, 19], [-98.9, 19.1], [-98.9, 19], [-99, 19.1], [-99, 19]]] },
    };
    // The API's limit: a circle over 100 km is almost always kilometres given as metres.
    const wide = { type: 'Feature', properties: { name: 'Wide', radius: 150_000 }, geometry: { type: 'Point', coordinates: [-99.1, 19.42] } };
    const usage = 'fleet geofence import --account ID [--mode live|test] FILE.geojson [--json]';
    const [lineFile, bowTieFile, wideFile] = await Promise.all([
      fleet(['geofence', 'import', '--account', accountArg, geoJsonFile(collection(polygon, line))]),
      fleet(['geofence', 'import', '--account', accountArg, geoJsonFile(collection(polygon, circle, bowTie))]),
      fleet(['geofence', 'import', '--account', accountArg, geoJsonFile(collection(polygon, wide))]),
    ]);
    expectUsageError(lineFile, 'feature 2 (Highway) is a LineString', usage);
    expectOneLineError(bowTieFile, /fleet geofence: Bow Tie: geometry is not valid: Self-intersection near lng /);
    expectOneLineError(wideFile, 'fleet geofence: Wide: radiusMeters must be more than 0 and at most 100000 (100 km), got 150000');
    expect(await countGeofences(account.id)).toBe(0);

    const imported = json(await fleet(['geofence', 'import', '--account', accountArg, geoJsonFile(collection(polygon, multi, circle)), '--json']));
    expect(imported).toEqual([
      { id: expect.any(Number), name: 'Yard A', mode: 'live', kind: 'polygon', vertexCount: 4, radiusMeters: expect.any(Number) },
      { id: expect.any(Number), name: 'Twin Lots', mode: 'live', kind: 'polygon', vertexCount: 4, radiusMeters: expect.any(Number) },
      { id: expect.any(Number), name: 'Gate', mode: 'live', kind: 'circle', vertexCount: expect.any(Number), radiusMeters: 150 },
    ]);
    expect(imported[0].radiusMeters).toBeGreaterThan(250);
    expect(imported[0].radiusMeters).toBeLessThan(350);
    expect(imported[2].vertexCount).toBeGreaterThanOrEqual(16);
    const rows = await database.db.selectFrom('geofences').select(['name', 'kind']).where('account_id', '=', account.id).orderBy('id').execute();
    expect(rows).toEqual([
      { name: 'Yard A', kind: 'polygon' },
      { name: 'Twin Lots', kind: 'polygon' },
      { name: 'Gate', kind: 'circle' },
    ]);

  }, 120_000);
});

describe('fleet demo', () => {
  it('seeds the demo fleet and prints its key; a second run fails with exit 1', async () => {
    const seed = json(await fleet(['demo', '--json']));
    expect(seed).toEqual({
      accountId: expect.any(Number),
      userId: expect.any(Number),
      apiKey: expect.stringMatching(/^fc_live_[A-Za-z0-9]{32}$/),
      devices: ['Truck 01', 'Truck 02', 'Van 03', 'Van 04', 'Test Truck'],
      geofences: ['Central de Abasto', 'Airport Cargo', 'Polanco Customer', 'Vallejo Depot'],
      travelId: expect.any(Number),
      // The demo user's sign-in, printed once: 12 random bytes as base64url.
      email: 'demo@fleetcore.local',
      password: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/),
    });
    const key = await database.db.selectFrom('api_keys').selectAll().where('user_id', '=', seed.userId).executeTakeFirstOrThrow();
    expect(key.key_hash).toBe(sha256(seed.apiKey));
    expect(await countGeofences(seed.accountId)).toBe(4);

    const again = await fleet(['demo']);
    expectOneLineError(again, 'fleet demo: demo data already exists');
  }, 90_000);
});

describe('fleet serve', () => {
  it('seeds the demo on a new database, passes the curl tour, sees CLI changes, and stops cleanly on SIGTERM', async () => {
    const fresh = await freshDatabase();
    let server: Serving | undefined;
    try {
      const trackerPort = await freePort();
      server = await serve({ ...fresh.env, PORT: '0', DEMO_SEED: 'true', TELTONIKA_PORT: String(trackerPort) }, /fc_live_[A-Za-z0-9]{32}/);
      const out = server.output();
      const demoKey = /fc_live_[A-Za-z0-9]{32}/.exec(out)![0];
      const demoAccount = /Demo data created: account (\d+)/.exec(out)?.[1];
      expect(demoAccount, out).toBeDefined();
      if (fresh.dataDir) expect(existsSync(join(fresh.dataDir, 'fleet.lock'))).toBe(true);

      const tour = await run('bash', [TOUR], { ...process.env, BASE_URL: server.url, API_KEY: demoKey }, 120_000);
      expect(tour.code, `${tour.stdout}\n${tour.stderr}\n${server.output()}`).toBe(0);
      expect(tour.stdout).toMatch(/# all \d+ checks passed/);

      // CLI commands while the server runs. On embedded, where the server holds DATA_DIR, they can only
      // succeed through its socket.
      const api = server.url.replace('//localhost:', '//127.0.0.1:');
      const get = async (path: string, key: string) => {
        const response = await fetch(`${api}${path}`, { headers: { Authorization: `Bearer ${key}` } });
        return { status: response.status, body: (await response.json()) as any };
      };
      const imei = '860000000000077';
      const [added, issued] = await Promise.all([
        fleet(['device', 'add', '--account', demoAccount!, '--imei', imei, '--name', 'CLI Van', '--plates', 'CLI-077', '--users', 'demo@fleetcore.local', '--json'], fresh.env),
        fleet(['key', 'create', '--user', 'demo@fleetcore.local', '--permissions', 'devices:read', '--json'], fresh.env),
      ]);
      expect(json(added)).toMatchObject({ imei, name: 'CLI Van', mode: 'live' });
      const key = json(issued);

      const statuses = await get('/api/v1/devices/status', demoKey);
      expect(statuses.status).toBe(200);
      expect(statuses.body.data.find((d: { deviceId: string }) => d.deviceId === imei)).toMatchObject({
        deviceId: imei,
        name: 'CLI Van',
        plates: 'CLI-077',
        status: 'Inactive',
        latitude: null,
        lastReportUtc: null,
      });

      // The new device reports over TCP as a Teltonika tracker; the API shows it at once.
      const tracker = connect(trackerPort, '127.0.0.1');
      let answer = Buffer.alloc(0);
      tracker.on('data', (chunk) => (answer = Buffer.concat([answer, chunk])));
      tracker.write(teltonikaLogin(imei));
      const fixTime = new Date(Math.floor(Date.now() / 1000) * 1000);
      tracker.write(teltonikaCodec8([{ time: fixTime, latitude: 19.42, longitude: -99.16, speedKmh: 48, heading: 180, satellites: 10, ignition: true }]));
      const deadline = Date.now() + 15_000;
      while (answer.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(answer.toString('hex'), server.output()).toBe('0100000001');
      tracker.destroy();
      expect((await get(`/api/v1/devices/${imei}/status`, demoKey)).body.data).toMatchObject({
        status: 'Moving', engineStatus: 'On', latitude: 19.42, longitude: -99.16, speedKmh: 48, satellites: 10,
      });

      // On the embedded default the demo vehicles drive by themselves: their trackers report to the server.
      if (fresh.dataDir) {
        const seededAt = Date.now() - 60_000;
        let reported = false;
        for (const until = Date.now() + 20_000; !reported && Date.now() < until; await new Promise((r) => setTimeout(r, 250))) {
          const van = (await get('/api/v1/devices/356307042441047/status', demoKey)).body.data; // seeded without any report
          reported = van.lastReportUtc !== null && Date.parse(van.lastReportUtc) > seededAt;
        }
        expect(reported, server.output()).toBe(true);
      }

      // The CLI's key works, with its one permission.
      const readable = await get(`/api/v1/devices/${imei}/status`, key.key);
      expect(readable.status).toBe(200);
      expect(readable.body.data.name).toBe('CLI Van');
      expect((await get('/api/v1/geofences', key.key)).status).toBe(403);

      server.process.kill('SIGTERM');
      const { code, signal } = await server.exited;
      expect({ code, signal }, server.output()).toEqual({ code: 0, signal: null });
      server = undefined;
      if (fresh.dataDir) {
        expect(existsSync(join(fresh.dataDir, 'fleet.lock'))).toBe(false);
        expect(existsSync(join(fresh.dataDir, '.s.PGSQL.5432'))).toBe(false);
      }
    } finally {
      if (server) {
        server.process.kill('SIGKILL');
        await server.exited;
      }
      await fresh.destroy();
    }
  }, 240_000);

  it('exits 1 with one line when the port is already in use', async () => {
    const fresh = await freshDatabase();
    const blocker: Server = createServer();
    try {
      await new Promise<void>((done) => blocker.listen(0, '127.0.0.1', done));
      const port = (blocker.address() as { port: number }).port;
      const result = await fleet(['serve'], { ...fresh.env, HOST: '127.0.0.1', PORT: String(port) });
      expectOneLineError(result, `fleet serve: port ${port} on 127.0.0.1 is already in use`);
      expect(result.stdout).not.toContain('listening');
      if (fresh.dataDir) expect(existsSync(join(fresh.dataDir, 'fleet.lock'))).toBe(false);
    } finally {
      await new Promise((done) => blocker.close(done));
      await fresh.destroy();
    }
  }, 120_000);
});
