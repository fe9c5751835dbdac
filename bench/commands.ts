import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { issueApiKey } from '../api/auth/api-key-token.ts';
import { createAccount } from '../db/accounts.ts';
import { insertApiKey } from '../db/api-keys.ts';
import { openDatabase } from '../db/database.ts';
import { addDevice } from '../db/devices.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { createUser } from '../db/users.ts';
import { commandTracker, type CommandTracker } from '../simulators/command-tracker.ts';
import { summarise } from '../simulators/latency-stats.ts';
import { teltonikaDialect } from '../simulators/tracker-dialect.ts';
import { freePort } from './tracker-load.ts';

const TRACKERS = 200;
const SEQUENTIAL = 300;
const BURST_PER_TRACKER = 5;
const BURST_CONCURRENCY = 32;

/**
 * Remote commands through `fleet serve` as a user runs it (its own process; the embedded default, or
 * DATABASE_URL + REDIS_URL, then with `--processes 2` so most commands cross processes): 200
 * Teltonika trackers on real sockets, each reporting a fix every 2 s. Latency: the POST's answer to
 * the Codec 12 frame at the tracker (the POST sent → the frame read), one command at a time. Throughput: 1,000 commands posted 32 at
 * a time, every tracker answering at once, until the last is acknowledged.
 */
export default async function commandsBench(args: string[]): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL;
  const processes = databaseUrl && process.env.REDIS_URL ? 2 : 1;
  const dataDir = databaseUrl ? undefined : mkdtempSync(join(tmpdir(), 'fleetcore-bench-commands-'));
  const setup = await openDatabase({ databaseUrl, dataDir: dataDir ?? '', embedded: 'own' });
  await migrateToLatest(setup.db);
  const stamp = Date.now();
  const account = await createAccount(setup.db, `Commands bench ${stamp}`);
  const user = await createUser(setup.db, { accountId: account.id, email: `commands-bench-${stamp}@example.com`, timezone: 'UTC' });
  const issued = issueApiKey('live');
  await insertApiKey(setup.db, { userId: user.id, prefix: issued.prefix, keyHash: issued.hash, mode: 'live', permissions: ['commands:read', 'commands:write'] });
  const imeis: string[] = [];
  for (let i = 0; i < TRACKERS; i++) {
    const imei = `37${String(stamp % 1e8).padStart(8, '0')}${String(i).padStart(5, '0')}`;
    await addDevice(setup.db, { accountId: account.id, imei, name: `Bench ${i}`, plates: `B-${i}`, mode: 'live', protocol: 'teltonika', userIds: [user.id] });
    imeis.push(imei);
  }
  await setup.close();

  const trackerPort = await freePort();
  const httpPort = await freePort();
  const server = await startServer({
    ...(databaseUrl ? { DATABASE_URL: databaseUrl, REDIS_URL: process.env.REDIS_URL ?? '' } : { DATA_DIR: dataDir! }),
    PORT: String(httpPort), TELTONIKA_PORT: String(trackerPort), DEMO_SEED: 'false', LOG_LEVEL: 'warn',
    // The bench's own requests, not the rate limit, are what it measures.
    OVERVIEW_RATE_LIMIT_MAX: '1000000',
  }, processes);
  const trackers: CommandTracker[] = [];
  const reporting: NodeJS.Timeout[] = [];
  try {
    for (const imei of imeis) trackers.push(await commandTracker(trackerPort, imei, teltonikaDialect));
    // Fixes spread over the 2 s, as a fleet's are.
    for (const [i, t] of trackers.entries()) {
      const start = setTimeout(() => {
        const timer = setInterval(() => void t.report({ speedKmh: 0 }).catch(() => undefined), 2_000);
        reporting.push(timer);
      }, (i * 2_000) / TRACKERS);
      reporting.push(start);
    }
    const post = (imei: string, type: string) => call(httpPort, issued.key, 'POST', '/commands', { deviceId: imei, type });

    // Latency, one command at a time, round the trackers; each answered before the next goes.
    const latencies: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      const tracker = trackers[i % TRACKERS]!;
      const sentAt = Date.now();
      const posted = await post(imeis[i % TRACKERS]!, i % 2 ? 'siren_on' : 'siren_off');
      if (posted.status !== 202) throw new Error(`POST answered ${posted.status}: ${JSON.stringify(posted.body)}`);
      const received = await tracker.nextCommand(10_000);
      if (!received) throw new Error(`command ${posted.body.data.id} never reached its tracker`);
      latencies.push(received.at - sentAt);
      tracker.answer(received);
    }

    // Throughput: every tracker answers what it gets, at once.
    let answering = true;
    const answerLoops = trackers.map(async (t) => {
      while (answering) {
        const received = await t.nextCommand(200);
        if (received) t.answer(received);
      }
    });
    const started = Date.now();
    const ids: string[] = [];
    const work = imeis.flatMap((imei) => Array.from({ length: BURST_PER_TRACKER }, (_, k) => ({ imei, type: k % 2 ? 'siren_on' : 'siren_off' })));
    await Promise.all(Array.from({ length: BURST_CONCURRENCY }, async () => {
      for (let next = work.shift(); next; next = work.shift()) ids.push((await post(next.imei, next.type)).body.data.id);
    }));
    const postedIn = Date.now() - started;
    for (;;) {
      const page = await call(httpPort, issued.key, 'GET', '/commands?status=queued,sent&limit=1');
      if (page.body.data.length === 0) break;
      if (Date.now() - started > 120_000) throw new Error('commands still open after 120 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    const allDone = Date.now() - started;
    answering = false;
    await Promise.all(answerLoops);
    const failed = await call(httpPort, issued.key, 'GET', '/commands?status=failed,expired&limit=1');

    const lat = summarise(latencies);
    const row = {
      backend: databaseUrl ? `PostgreSQL + Redis, --processes ${processes}` : 'embedded (PGlite, in-process)',
      trackers: TRACKERS,
      latencyP50Ms: +lat.p50.toFixed(1),
      latencyP99Ms: +lat.p99.toFixed(1),
      latencyMaxMs: Math.max(...latencies),
      burstCommands: ids.length,
      postedPerSec: Math.round((ids.length / postedIn) * 1000),
      acknowledgedPerSec: Math.round((ids.length / allDone) * 1000),
      notAcknowledged: failed.body.data.length,
    };
    if (args.includes('--json')) process.stdout.write(`${JSON.stringify(row)}\n`);
    else {
      process.stdout.write('| backend | trackers | POST sent → frame read p50 / p99 / max ms | burst | posted/s | acknowledged/s | failed or expired |\n|---|---|---|---|---|---|---|\n');
      process.stdout.write(`| ${row.backend} | ${row.trackers} | ${row.latencyP50Ms} / ${row.latencyP99Ms} / ${row.latencyMaxMs} | ${row.burstCommands} | ${row.postedPerSec} | ${row.acknowledgedPerSec} | ${row.notAcknowledged} |\n`);
    }
  } finally {
    for (const timer of reporting) clearTimeout(timer);
    for (const t of trackers) t.close();
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

async function startServer(env: Record<string, string>, processes: number): Promise<ChildProcess> {
  const args = [resolve(import.meta.dirname, '../cli/fleet.js'), 'serve', ...(processes > 1 ? ['--processes', String(processes)] : [])];
  const child = spawn(process.execPath, args, { env: { ...process.env, ENV_FILE: '', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`fleet serve not ready in 120 s:\n${out}`)), 120_000);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if ((out.match(/API listening on/g) ?? []).length >= processes) {
        clearTimeout(timer);
        done();
      }
    });
    child.once('exit', (code) => fail(new Error(`fleet serve exited (${code}):\n${out}`)));
  });
  return child;
}

/** One request on a connection of its own, so --processes hands each to the next process in turn. */
function call(port: number, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((done, fail) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { host: '127.0.0.1', port, method, path: `/api/v1${path}`, agent: false, headers: { Authorization: `Bearer ${key}`, ...(payload ? { 'Content-Type': 'application/json' } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => done({ status: res.statusCode!, body: JSON.parse(text) }));
      },
    );
    req.on('error', fail);
    req.end(payload);
  });
}
