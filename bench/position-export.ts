import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { openDatabase, type DatabaseHandle } from '../db/database.ts';
import { migrateToLatest } from '../db/migrator.ts';
import { copyFixBatch } from '../db/position-copy.ts';
import { storeFixBatch } from '../db/position-batches.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import { summarise } from '../simulators/latency-stats.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { serveBenchApi } from './bench-api-server.ts';

const FIXES = 100_000;
const RUNS = 5;
const STEP_MS = 5_000;
const BATCH = 5_000;
const M_PER_DEG = 111_195;

/**
 * One vehicle's 100,000 fixes (a fix every 5 s, ~5.8 days, with the attributes a tracker sends),
 * stored by the ingest writers (COPY on PostgreSQL, multi-row INSERT on the embedded database), then
 * read over real HTTP end to end, the whole body each time: the CSV export, every JSON page of
 * 5,000, and the GeoJSON track simplified to 10 m. Seeded, so every run reads the same data.
 */
async function storeTrack(handle: DatabaseHandle, deviceId: number, start: number): Promise<number> {
  let seed = 42;
  const random = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  let lat = 19.4;
  let lng = -99.1;
  let heading = 0;
  const began = performance.now();
  for (let i = 0; i < FIXES; i += BATCH) {
    const batch: StoredFix[] = [];
    for (let k = i; k < Math.min(FIXES, i + BATCH); k++) {
      heading += (random() - 0.5) * 0.4;
      const speedKmh = 30 + random() * 50;
      const metres = (speedKmh / 3.6) * (STEP_MS / 1000);
      lat += (Math.cos(heading) * metres) / M_PER_DEG;
      lng += (Math.sin(heading) * metres) / (M_PER_DEG * Math.cos((lat * Math.PI) / 180));
      const t = new Date(start + k * STEP_MS);
      batch.push({
        deviceId, fixTime: t, receivedAt: t, valid: random() > 0.01, latitude: lat, longitude: lng, altitude: 2240 + random() * 20,
        speedKmh, heading: ((heading * 180) / Math.PI + 360) % 360, satellites: 6 + Math.floor(random() * 8), ignition: true,
        attributes: { odometer: Math.round(k * 50), rssi: 20 + Math.floor(random() * 10), power: 12.6, battery: 4.1, motion: true },
      });
    }
    if (handle.pool) await copyFixBatch(handle.pool, handle.db, batch, []);
    else await storeFixBatch(handle.db, batch);
  }
  return (performance.now() - began) / 1000;
}

/**
 * The HTTP client, in a worker thread so that reading and parsing the answers runs beside the server,
 * as a separate client would, instead of taking turns with it on one event loop. Plain JavaScript:
 * worker threads do not inherit the TypeScript loader. Each answer is read whole; a CSV is counted
 * in lines, a JSON page followed by its cursor, a GeoJSON parsed.
 */
const CLIENT = `
const { parentPort } = require('node:worker_threads');
async function read(url, key) {
  const began = performance.now();
  const res = await fetch(url, { headers: { Authorization: 'Bearer ' + key } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(url + ' answered ' + res.status + ': ' + text.slice(0, 300));
  return { ms: performance.now() - began, text };
}
parentPort.on('message', async ({ kind, url, key }) => {
  try {
    if (kind === 'csv') {
      const r = await read(url, key);
      parentPort.postMessage({ ms: r.ms, bytes: Buffer.byteLength(r.text), items: r.text.split('\\r\\n').length - 2 });
    } else if (kind === 'geojson') {
      const r = await read(url, key);
      parentPort.postMessage({ ms: r.ms, bytes: Buffer.byteLength(r.text), items: JSON.parse(r.text).features.length - 1 });
    } else {
      const began = performance.now();
      const pages = [];
      let items = 0;
      for (let next = url; next; ) {
        const r = await read(next, key);
        pages.push(r.ms);
        const page = JSON.parse(r.text);
        items += page.data.length;
        next = page.next_cursor ? url + '&cursor=' + page.next_cursor : undefined;
      }
      parentPort.postMessage({ ms: performance.now() - began, pages, items });
    }
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.stack || error) });
  }
});
`;

interface ClientResult {
  ms: number;
  bytes?: number;
  items: number;
  pages?: number[];
}

function httpClient() {
  const worker = new Worker(CLIENT, { eval: true });
  return {
    read(kind: 'csv' | 'geojson' | 'pages', url: string, key: string): Promise<ClientResult> {
      return new Promise((resolve, reject) => {
        worker.once('message', (m: ClientResult & { error?: string }) => (m.error ? reject(new Error(m.error)) : resolve(m)));
        worker.postMessage({ kind, url, key });
      });
    },
    close: () => worker.terminate(),
  };
}

export default async function positionExportBench(args: string[]): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetcore-bench-'));
  const handle = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir, embedded: 'own' });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  let cleanup = async () => undefined as unknown;
  try {
    await migrateToLatest(handle.db);
    const f = fixtures(handle.db);
    const { account, key } = await f.tenant('America/Mexico_City');
    const device = await f.device(account.id, { name: 'Export bench' });
    // Positions have no foreign key (migration 0002): they are deleted by device, then the account.
    cleanup = async () => {
      await handle.db.deleteFrom('positions').where('device_id', '=', device.id).execute();
      await handle.db.deleteFrom('accounts').where('id', '=', account.id).execute();
    };
    const start = Date.UTC(2024, 5, 1, 6);
    log(`storing ${FIXES.toLocaleString('en')} fixes for one vehicle`);
    const storeS = await storeTrack(handle, device.id, start);
    log(`  stored in ${storeS.toFixed(1)} s`);

    const server = await serveBenchApi(handle.db);
    const base = `${server.base}/vehicles/${device.imei}/positions?from=2024-06-01&to=2024-06-30`;

    const client = httpClient();
    const rows = [];
    const csv: number[] = [];
    let csvBytes = 0;
    for (let run = 0; run < RUNS; run++) {
      const r = await client.read('csv', `${base}&format=csv`, key);
      if (r.items !== FIXES) throw new Error(`the CSV held ${r.items} rows, not ${FIXES}`);
      csv.push(r.ms);
      csvBytes = r.bytes!;
    }
    const c = summarise(csv);
    rows.push({ read: `CSV, whole range (${(csvBytes / 1e6).toFixed(1)} MB)`, requests: 1, p50Ms: Math.round(c.p50), maxMs: Math.round(c.max), rowsPerSec: Math.round(FIXES / (c.p50 / 1000)) });

    const pages: number[] = [];
    const totals: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const r = await client.read('pages', `${base}&limit=5000`, key);
      if (r.items !== FIXES) throw new Error(`the pages held ${r.items} fixes, not ${FIXES}`);
      pages.push(...r.pages!);
      totals.push(r.ms);
    }
    const p = summarise(pages);
    const whole = summarise(totals);
    rows.push({ read: 'JSON, one page of 5,000', requests: 1, p50Ms: Math.round(p.p50), maxMs: Math.round(p.max), rowsPerSec: Math.round(5_000 / (p.p50 / 1000)) });
    rows.push({ read: 'JSON, all 20 pages of 5,000', requests: FIXES / 5_000, p50Ms: Math.round(whole.p50), maxMs: Math.round(whole.max), rowsPerSec: Math.round(FIXES / (whole.p50 / 1000)) });

    const geo: number[] = [];
    let points = 0;
    for (let run = 0; run < RUNS; run++) {
      const r = await client.read('geojson', `${base}&format=geojson&simplify=10`, key);
      geo.push(r.ms);
      points = r.items;
    }
    const g = summarise(geo);
    rows.push({ read: `GeoJSON simplify=10 (${points.toLocaleString('en')} points kept)`, requests: 1, p50Ms: Math.round(g.p50), maxMs: Math.round(g.max), rowsPerSec: Math.round(FIXES / (g.p50 / 1000)) });
    await client.close();
    server.close();

    if (args.includes('--json')) process.stdout.write(`${JSON.stringify({ database: handle.kind, fixes: FIXES, runs: RUNS, storeS: +storeS.toFixed(1), rows }, null, 2)}\n`);
    else {
      process.stdout.write(`Position history of one vehicle, ${FIXES.toLocaleString('en')} fixes, ${handle.description}, over HTTP, ${RUNS} runs each\n`);
      console.table(rows);
    }
  } finally {
    await cleanup().catch(() => undefined);
    await handle.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
