import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { fixtures, square } from '../simulators/fleet-records.ts';
import { summarise } from '../simulators/latency-stats.ts';
import { buildFleetDataset } from './fleet-dataset.ts';
import { serveBenchApi } from './bench-api-server.ts';

const DEVICES = 200;
const GEOFENCES = 50;
const CONCURRENCY = 32;
const DURATION_MS = 8_000;

function hammer(url: string, key: string): Promise<{ perSecond: number; latencies: number[]; errors: number }> {
  const request = { url, key, concurrency: CONCURRENCY, durationMs: DURATION_MS };
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./http-load.js', import.meta.url), { workerData: request });
    worker.once('message', (result: { latencies: number[]; errors: number; elapsedMs: number }) => {
      resolve({ perSecond: result.latencies.length / (result.elapsedMs / 1000), latencies: result.latencies, errors: result.errors });
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

function option(args: string[], name: string, fallback: number): number {
  const raw = args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got "${raw}"`);
  return value;
}

/**
 * API latency over real HTTP, 32 concurrent clients (in a worker thread) for 8 s per endpoint.
 * Detailed endpoints: one account with 200 devices (all with state) and 50 geofences. Fleet data: a
 * second account of `--vehicles` (1,000) vehicles with `--days` (30) days of fixes, stored by the
 * ingest writers and segmented by the engine, for the trips report. Embedded by default, PostgreSQL
 * with DATABASE_URL.
 */
export default async function apiBench(args: string[]): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-'));
  const handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, embedded: 'own' });
  try {
    await migrateToLatest(handle.db);
    const f = fixtures(handle.db);
    const { account, key } = await f.tenant();
    const now = new Date();
    for (let i = 0; i < DEVICES; i++) {
      const device = await f.device(account.id, { name: `Bench ${String(i).padStart(4, '0')}` });
      await f.fix(device.id, { fixTime: now, valid: true, latitude: 19 + i / 1000, longitude: -99 - i / 1000, speedKmh: i % 60, ignition: i % 3 !== 0 }, now);
    }
    for (let i = 0; i < GEOFENCES; i++) await f.geofence(account.id, `Zone ${i}`, square(19 + i / 100, -99, 0.002));

    const server = await serveBenchApi(handle.db);
    const base = server.base;
    const today = now.toISOString().slice(0, 10);
    const endpoints = [
      ['GET /devices/status (200 devices)', `${base}/devices/status`],
      ['GET /devices/{id}/status', `${base}/devices/${(await f.device(account.id)).imei}/status`],
      ['GET /geofences (50)', `${base}/geofences`],
      ['GET /reports/geofences (1 day)', `${base}/reports/geofences?from=${today}&to=${today}`],
      ['GET /travels', `${base}/travels`],
    ] as const;
    const vehicles = option(args, 'vehicles', 1000);
    const days = option(args, 'days', 30);
    const log = (line: string) => process.stderr.write(`${line}\n`);
    log(`building the fleet: ${vehicles} vehicles x ${days} days of fixes`);
    const fleet = await buildFleetDataset(handle, vehicles, days, log);
    log(`  ${fleet.fixes.toLocaleString('en')} fixes stored in ${fleet.storeS.toFixed(1)} s; segmented into ${fleet.trips.toLocaleString('en')} trips in ${fleet.segmentS.toFixed(1)} s (${Math.round(fleet.fixes / fleet.segmentS).toLocaleString('en')} fixes/s)`);
    // A cursor from the middle of the list: keyset pages cost the same wherever they start.
    const firstPage = await fetch(`${base}/vehicles?limit=500`, { headers: { Authorization: `Bearer ${fleet.key}` } });
    const middle = ((await firstPage.json()) as { next_cursor: string | null }).next_cursor;
    const fleetEndpoints = [
      [`GET /vehicles (first page of 50, ${vehicles} vehicles)`, `${base}/vehicles`],
      [`GET /vehicles?limit=500`, `${base}/vehicles?limit=500`],
      [`GET /vehicles (page of 50 after 500)`, middle ? `${base}/vehicles?cursor=${middle}` : `${base}/vehicles`],
      [`GET /vehicles?status=moving&q=fleet 00`, `${base}/vehicles?status=moving&q=fleet%2000`],
      [`GET /reports/trips (1 vehicle, ${days} days)`, `${base}/reports/trips?from=${fleet.firstDay}&to=${fleet.lastDay}&deviceIds=${fleet.imeis[0]}`],
      [`GET /reports/trips (${vehicles} vehicles, 1 day, all sections)`, `${base}/reports/trips?from=${fleet.lastDay}&to=${fleet.lastDay}`],
      [`GET /reports/trips (${vehicles} vehicles, ${days} days, summary)`, `${base}/reports/trips?from=${fleet.firstDay}&to=${fleet.lastDay}&include=summary`],
    ] as const;

    const rows = [];
    for (const [name, url, as] of [...endpoints.map(([n, u]) => [n, u, key] as const), ...fleetEndpoints.map(([n, u]) => [n, u, fleet.key] as const)]) {
      const { perSecond, latencies, errors } = await hammer(url, as);
      const s = summarise(latencies);
      rows.push({ endpoint: name, reqPerSec: Math.round(perSecond), p50Ms: +s.p50.toFixed(2), p99Ms: +s.p99.toFixed(2), errors });
    }
    server.close();
    const dataset = { vehicles, days, fixes: fleet.fixes, trips: fleet.trips, storeS: +fleet.storeS.toFixed(1), segmentS: +fleet.segmentS.toFixed(1) };
    if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ database: handle.kind, concurrency: CONCURRENCY, dataset, rows }, null, 2)}\n`);
    else {
      process.stdout.write(`API latency, ${handle.description}, ${CONCURRENCY} concurrent clients, ${DURATION_MS / 1000} s each\n`);
      console.table(rows);
    }
  } finally {
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
