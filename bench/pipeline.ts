import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createAccount } from '../db/accounts.ts';
import { openDatabase, type DatabaseHandle } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { ensureSimulatedDevices, simulatedImei } from '../simulators/simulated-devices.ts';
import { summarise } from '../simulators/latency-stats.ts';
import { startFleetServer } from './fleet-server.ts';
import { seedGrid } from './geofence-grid.ts';
import { cpuSecondsBetween, named, sampleCpu, treeOf, type CpuSample, type GroupMembers } from './process-cpu.ts';
import { freePort, pickedScenarios, runTrackerLoad } from './tracker-load.ts';
import { redactUrl } from '../runtime/redact-url.ts';

const SEED = 9;
const DURATION_MS = 25_000;
const WARMUP_MS = 5_000;
const IDLE_WINDOW_MS = 10_000;
const CENTER = { lat: 19.43, lng: -99.13 };

interface Scenario {
  devices: number;
  intervalMs: number;
  recordsPerUpload: number;
}

const SCENARIOS: Scenario[] = [
  { devices: 1_000, intervalMs: 100, recordsPerUpload: 10 }, // 10,000 fixes/s
  { devices: 1_000, intervalMs: 33, recordsPerUpload: 10 }, // 30,000 fixes/s
  { devices: 1_000, intervalMs: 20, recordsPerUpload: 10 }, // 50,000 fixes/s
  { devices: 2_000, intervalMs: 20, recordsPerUpload: 10 }, // 100,000 fixes/s
  // A fix per packet from 10,000 trackers: the packets per second of 100,000 trackers reporting every 10 s.
  { devices: 10_000, intervalMs: 1_000, recordsPerUpload: 1 }, // 10,000 fixes/s
];

const GROUPS = ['server', 'ingest', 'engine', 'api', 'postgres', 'pgbouncer', 'redis'] as const;
/** With `--split-roles`: one `fleet serve --roles <role>` process each, as a multi-node deployment splits them. */
const ROLES = ['ingest', 'engine', 'api'] as const;

/** `--processes=3`: the server's `--processes`. */
function pickedProcesses(args: string[]): number {
  const pick = args.find((a) => a.startsWith('--processes='));
  return pick ? Number(pick.slice('--processes='.length)) : 1;
}

/**
 * `fleet serve` (all roles, in its own process, as users run it) taking simulated Teltonika trackers
 * from a load generator in another process, with a grid of 5,329 geofences over the area they drive in.
 * Per load: positions stored per second, enter/exit events per second, the delay from a fix's arrival
 * at the server to its enter event being queryable (polled every 50 ms), ACK p99, and the CPU each
 * process group spent per stored position over the steady window, read from /proc.
 *
 * The bench's own probe stays out of the CPU figures: on PostgreSQL its queries run on a backend the
 * bench excludes by pid; on the embedded database they run inside the server, so the bench measures
 * the probe alone at idle and subtracts that rate (printed). The first row is the server idle.
 * PostgreSQL with DATABASE_URL (BullMQ too with REDIS_URL), the embedded database otherwise.
 * `--split-roles` runs ingest, the engine and the API as a process each and gives each one's CPU. On
 * PostgreSQL, also the WAL written per acknowledged position, from the fixes' arrival to the engine's
 * catching up (what a replica receives and the disk writes besides the tables).
 */
export default async function pipelineBench(args: string[]): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  // BENCH_POOLER_URL: the server reaches DATABASE_URL's database through this pooler (PgBouncer, with
  // DATABASE_POOL_MODE as it runs); the bench's own connections stay direct, so its probe stays out.
  const poolerUrl = databaseUrl ? process.env.BENCH_POOLER_URL : undefined;
  const redisUrl = process.env.REDIS_URL;
  const processes = pickedProcesses(args);
  const splitRoles = args.includes('--split-roles');
  if (splitRoles && (!databaseUrl || !redisUrl)) throw new Error('--split-roles needs DATABASE_URL and REDIS_URL: processes of separate roles share the database and the queue');
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-'));
  let geofences = 0;
  // The server owns the embedded database: the bench prepares it first, then reaches it through the server's socket.
  {
    const setup = await openDatabase({ databaseUrl, dataDir, embedded: 'own', poolSize: 2 });
    try {
      geofences = await prepare(setup);
    } finally {
      await setup.close();
    }
  }
  const port = await freePort();
  const env = {
    ...(databaseUrl ? { DATABASE_URL: poolerUrl ?? databaseUrl } : { DATA_DIR: dataDir }),
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    PORT: String(await freePort()), TELTONIKA_PORT: String(port),
  };
  const servers = splitRoles
    ? Object.fromEntries(await Promise.all(ROLES.map(async (role) => [role, await startFleetServer(env, processes, role)] as const)))
    : { server: await startFleetServer(env, processes) };
  const probe = await openDatabase({ databaseUrl, dataDir, embedded: 'share', poolSize: 1 });
  const probeBackends = new Set<number>();
  // Only the servers this run uses: on the embedded default the database and queue are in the server's process.
  const groups: Record<string, GroupMembers> = {
    ...Object.fromEntries(Object.entries(servers).map(([name, server]) => [name, treeOf(server.pid)])),
    ...(databaseUrl ? { postgres: named('postgres', () => probeBackends) } : {}),
    ...(poolerUrl ? { pgbouncer: named('pgbouncer') } : {}),
    ...(redisUrl ? { redis: named('redis-server') } : {}),
  };
  const rows: Array<Record<string, number | string>> = [];
  try {
    if (databaseUrl) {
      const { rows: backend } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(probe.db);
      probeBackends.add(backend[0]!.pid);
    }
    const picked = pickedScenarios(args);
    // Row 0, idle: what the server spends with no tracker; on the embedded database also what the
    // probe costs it, which is taken out of the loaded rows (so measured whether row 0 is shown or not).
    let probeCoresEmbedded = 0;
    if (!picked || picked.includes(0) || !databaseUrl) {
      const idle = await cpuOver(groups, IDLE_WINDOW_MS);
      if (!databaseUrl) {
        const probed = (await withProbe(probe.db, () => cpuOver(groups, IDLE_WINDOW_MS))).result;
        probeCoresEmbedded = Math.max(0, (probed.server! - idle.server!) / (IDLE_WINDOW_MS / 1000));
      }
      if (!picked || picked.includes(0)) {
        rows.push({
          offeredPerSec: 0, positionsPerSec: 0, eventsPerSec: 0, eventDelayP50Ms: '', eventDelayP99Ms: '', ackP99Ms: '',
          ...Object.fromEntries(GROUPS.filter((g) => g in groups).map((g) => [`${g}Cores`, round2(idle[g]! / (IDLE_WINDOW_MS / 1000))])),
        });
      }
    }

    for (const [index, scenario] of SCENARIOS.entries()) {
      if (picked && !picked.includes(index + 1)) continue;
      const startedAt = new Date();
      const walBefore = databaseUrl ? await walPosition(probe.db) : undefined;
      const { result: measured, delays } = await withProbe(probe.db, async () => {
        let start: CpuSample | undefined;
        let spent: Record<string, number> = {};
        const load = await runTrackerLoad(port, { ...scenario, durationMs: DURATION_MS, warmupMs: WARMUP_MS, seed: SEED }, (edge) => {
          if (edge === 'start') start = sampleCpu(groups);
          else if (start) spent = cpuSecondsBetween(start, sampleCpu(groups));
        });
        // Let the engine finish what was committed before the probe stops.
        await engineCaughtUp(probe.db);
        return { load, spent };
      }, startedAt);
      const { load, spent } = measured;
      // WAL is the cluster's: what else writes to this server while the bench runs counts too.
      const walBytes = walBefore === undefined ? undefined : (await walPosition(probe.db)) - walBefore;
      const seconds = (Date.now() - startedAt.getTime()) / 1000;
      const { rows: produced } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM geofence_events WHERE created_at >= ${startedAt.toISOString()}::timestamptz`.execute(probe.db);
      const latency = summarise(delays);
      const stored = Math.max(1, load.steadyAcked);
      // Split, the server is its role processes together.
      const serverSeconds = splitRoles
        ? ROLES.reduce((sum, role) => sum + spent[role]!, 0)
        : Math.max(0, spent.server! - probeCoresEmbedded * load.steadySeconds);
      const perPosition = (s: number | undefined) => (s === undefined ? '' : Math.round((s / stored) * 1e6 * 10) / 10);
      rows.push({
        offeredPerSec: Math.round((scenario.devices * 1000) / scenario.intervalMs),
        positionsPerSec: Math.round(load.ackedPerSec),
        eventsPerSec: Math.round(produced[0]!.n / seconds),
        eventDelayP50Ms: Math.round(latency.p50),
        eventDelayP99Ms: Math.round(latency.p99),
        ackP99Ms: Math.round(load.p99),
        serverUs: perPosition(serverSeconds),
        ...(splitRoles ? Object.fromEntries(ROLES.map((role) => [`${role}Us`, perPosition(spent[role])])) : {}),
        postgresUs: perPosition(spent.postgres),
        ...(poolerUrl ? { pgbouncerUs: perPosition(spent.pgbouncer) } : {}),
        redisUs: perPosition(spent.redis),
        totalUs: perPosition(serverSeconds + (spent.postgres ?? 0) + (spent.pgbouncer ?? 0) + (spent.redis ?? 0)),
        loadGeneratorUs: perPosition(load.cpuSeconds),
        ...(walBytes === undefined ? {} : { walBytesPerPosition: Math.round(walBytes / Math.max(1, load.acknowledged)) }),
      });
    }
    const header = `Pipeline: \`fleet serve\`${processes > 1 ? ` --processes ${processes}` : ''} ${splitRoles ? `--roles ${ROLES.join(' / ')} (a process each)` : '(all roles)'} on ${probe.description}${poolerUrl ? ` through ${redactUrl(poolerUrl)} (DATABASE_POOL_MODE=${process.env.DATABASE_POOL_MODE || 'session'})` : ''}, ` +
      `engine queue on ${redisUrl ? 'Redis (BullMQ)' : 'the in-process queue'}, ${geofences} geofences, ${DURATION_MS / 1000} s per load, ` +
      `CPU µs per stored position over the last ${(DURATION_MS - WARMUP_MS) / 1000} s (idle row: cores)` +
      (databaseUrl ? '' : `; the probe's ${round2(probeCoresEmbedded)} cores measured at idle and taken out of the server's figure`);
    if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ header, processes, rows })}\n`);
    else {
      process.stdout.write(`${header}\n`);
      console.table(rows);
    }
  } finally {
    await probe.close();
    for (const server of Object.values(servers)) await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;

async function cpuOver(groups: Record<string, GroupMembers>, ms: number): Promise<Record<string, number>> {
  const before = sampleCpu(groups);
  await new Promise((r) => setTimeout(r, ms));
  return cpuSecondsBetween(before, sampleCpu(groups));
}

/** The account, geofences and trackers of the bench, their old history marked evaluated; the geofence count. */
async function prepare(handle: DatabaseHandle): Promise<number> {
  await migrateToLatest(handle.db);
  // The simulated IMEIs are fixed by the seed: reuse the account that holds them (an earlier bench run's).
  const holder = await handle.db.selectFrom('devices').select('account_id').where('imei', '=', simulatedImei(SEED, 0)).executeTakeFirst();
  const accountId = holder?.account_id ?? (await createAccount(handle.db, 'Pipeline bench')).id;
  const geofences = await seedGrid(handle.db, accountId, CENTER);
  await ensureSimulatedDevices(handle.db, accountId, SEED, Math.max(...SCENARIOS.map((s) => s.devices)));
  // History left by an earlier run (or by the ingest bench, same IMEIs) is marked evaluated: this
  // bench measures live traffic, not a catch-up.
  await sql`
    INSERT INTO device_engine_states (device_id, cursor_fix_time)
    SELECT s.device_id, s.fix_time FROM device_states s JOIN devices d ON d.id = s.device_id WHERE d.account_id = ${accountId}
    ON CONFLICT (device_id) DO UPDATE SET cursor_fix_time = excluded.cursor_fix_time, inside = '{}', pending = '[]'
  `.execute(handle.db);
  return geofences;
}

/**
 * Runs `work` while polling every 50 ms for enter events logged since `since`, each read once: the
 * delays from its fix's arrival at the server to the poll that saw it (the first WARMUP_MS not timed).
 */
async function withProbe<T>(db: DatabaseHandle['db'], work: () => Promise<T>, since = new Date()): Promise<{ result: T; delays: number[] }> {
  const delays: number[] = [];
  let lastId = 0;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const { rows: fresh } = await sql<{ id: number; arrived: Date }>`
        SELECT e.id, p.server_time AS arrived FROM geofence_events e
        JOIN positions p ON p.device_id = e.device_id AND p.fix_time = e.fix_time
        WHERE e.id > ${lastId} AND e.type = 'enter' AND e.created_at >= ${since.toISOString()}::timestamptz
        ORDER BY e.id
      `.execute(db);
      const now = Date.now();
      for (const r of fresh) {
        lastId = Math.max(lastId, Number(r.id));
        if (now - since.getTime() > WARMUP_MS) delays.push(now - r.arrived.getTime());
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  try {
    const result = await work();
    return { result, delays };
  } finally {
    polling = false;
    await poller;
  }
}

/** The server's current WAL position, in bytes. */
async function walPosition(db: DatabaseHandle['db']): Promise<number> {
  const { rows } = await sql<{ lsn: string }>`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn`.execute(db);
  return Number(rows[0]!.lsn);
}

/** Waits (up to a minute) until no device has a stored fix past its engine cursor. */
async function engineCaughtUp(db: DatabaseHandle['db']): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { rows: behind } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM device_states s JOIN device_engine_states e ON e.device_id = s.device_id
      WHERE s.fix_time > coalesce(e.cursor_fix_time, '-infinity')`.execute(db);
    if (behind[0]!.n === 0 || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
