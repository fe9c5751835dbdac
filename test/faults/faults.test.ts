import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/database.ts';
import { migrateToLatest } from '../../db/migrator.ts';
import { freePort, root } from '../support/fleet-process.ts';
import { databaseUrlFor } from '../../db/postgres-admin.ts';
import { FAULTS } from './fault-catalog.ts';
import { failedRow, faultRow, faultTable, type FaultRow } from './fault-table.ts';
import { runFleet, type RunResult, type RunSettings, type SuiteServers } from './fleet-run.ts';
import { unmatched } from './run-record.ts';
import { RedisServerProcess } from './redis-server-process.ts';
import { suiteEpoch } from './seeded-fleet.ts';

/**
 * Faults, proven: a seeded fleet of Teltonika and GT06 trackers drives at a steady pace through
 * `fleet serve --roles ingest`, `--roles engine` and `--roles api` on PostgreSQL and a Redis of the
 * suite's own, while one fault is injected per run. After each: every acknowledged fix stored once,
 * the events equal to the undisturbed run's row for row, every event delivered to the webhook at
 * least once, every travel where the baseline's is, the processes up without anyone restarting
 * them (but the one the suite killed), and the time the pipeline took to catch up. One table at the end.
 */

const SEED = 2026;
const SETTINGS: RunSettings = {
  seed: SEED,
  epoch: suiteEpoch(Date.now(), SEED),
  vehicles: 24,
  gt06Every: 3,
  fixesPerVehicle: 56,
  periodMs: 500,
  travels: 8,
  faultAtMs: 8_000,
  parkedTravelAtMs: 22_000,
  etaRefreshS: 5,
  settleMs: 150_000,
};

const databaseUrl = process.env.DATABASE_URL;
const rows: FaultRow[] = [];
let suite: SuiteServers | undefined;
let baseline: RunResult | undefined;

/** What every run must show, baseline included. */
function expectSettled(run: RunResult): void {
  const context = `${run.fault}\n${run.warnings.slice(-20).join('\n')}`;
  expect(run.stuck, context).toEqual([]);
  expect(run.crashed, context).toEqual([]);
  expect(run.exits.filter((e) => e.code !== 0), `a process did not stop cleanly\n${context}`).toEqual([]);
  expect(run.acked, 'every fix generated was acknowledged').toBe(run.generated);
  expect(run.ackedLost, 'acknowledged fixes missing from positions').toEqual([]);
  expect(run.positions.repeated, 'positions stored twice').toBe(0);
  expect(run.duplicateKeys, 'events logged twice').toEqual([]);
  expect(run.undelivered, 'events never delivered to the webhook').toEqual([]);
  expect(run.receiver.badSignatures).toBe(0);
  expect(run.recovery.caughtUpMs, 'the pipeline never caught up').toBeDefined();
  expect(run.recovery.apiMs, 'the API never answered after the fault').toBeDefined();
}

describe('faults', () => {
  beforeAll(async () => {
    if (!databaseUrl) throw new Error('npm run test:faults needs DATABASE_URL: a PostgreSQL 15 server with PostGIS (the suite creates and drops its own databases there)');
    const templateDatabase = `fleetcore_faults_tmpl_${process.pid}`;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${templateDatabase}`);
      await admin.query(`CREATE DATABASE ${templateDatabase}`);
    } finally {
      await admin.end();
    }
    const handle = await openDatabase({ databaseUrl: databaseUrlFor(databaseUrl, templateDatabase), dataDir: '', embedded: 'own', poolSize: 1 });
    try {
      await migrateToLatest(handle.db);
    } finally {
      await handle.close();
    }
    const redis = new RedisServerProcess(await freePort());
    await redis.start();
    suite = { adminUrl: databaseUrl, templateDatabase, redis };
  });

  afterAll(async () => {
    if (rows.length > 0) {
      const table = faultTable(rows);
      const settings = `${SETTINGS.vehicles} trackers (every ${SETTINGS.gt06Every}rd GT06, the rest Teltonika), ${SETTINGS.fixesPerVehicle} fixes each, one per ${SETTINGS.periodMs} ms (seed ${SETTINGS.seed}); the fault ${SETTINGS.faultAtMs / 1000} s in`;
      process.stdout.write(`\nFaults, proven: ${settings}\n\n${table}\n\n`);
      mkdirSync(join(root, 'test/artifacts'), { recursive: true });
      const faults = FAULTS.map((f) => `- **${f.name}**: ${f.does}`).join('\n');
      const details = rows.map((r) => `- **${r.fault}**: ${r.detail}`).join('\n');
      writeFileSync(
        join(root, 'test/artifacts/faults.md'),
        `# Faults, proven\n\n${new Date().toISOString()}: ${settings}.\n\n${faults}\n\n${table}\n\nTimes from the end of the fault (the restart spawned, the server back, the receiver answering).\n\n${details}\n`,
      );
    }
    if (suite) {
      await suite.redis.stop();
      const admin = new pg.Client({ connectionString: suite.adminUrl });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${suite.templateDatabase} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('baseline: the seeded fleet undisturbed', async () => {
    const run = await runFleet(suite!, undefined, SETTINGS).catch((error: unknown) => {
      rows.push(failedRow('none (baseline)', error));
      throw error;
    });
    baseline = run;
    rows.push(faultRow(run, run));
    expectSettled(run);
    // A yardstick that measures something: crossings, travels, ignition, speeding, status, from both protocols.
    const kinds = new Set(run.keys.map((k) => k.split(' ')[0]));
    for (const kind of ['vehicle.geofence.enter', 'vehicle.geofence.exit', 'vehicle.status.changed', 'vehicle.ignition.on', 'vehicle.ignition.off', 'vehicle.overspeed', 'travel.started', 'travel.waypoint.arrived', 'travel.completed']) {
      expect(kinds, `the baseline logs no ${kind}`).toContain(kind);
    }
    expect(run.keys.length).toBeGreaterThan(300);
    expect(run.travels.some((t) => t.status === 'Completed')).toBe(true);
    expect(run.trackers.filter((t) => t.vehicle.protocol === 'gt06').every((t) => t.acknowledged === t.vehicle.fixes.length)).toBe(true);
  }, 300_000);

  for (const fault of FAULTS) {
    it(`${fault.name}: ${fault.does}`, async () => {
      if (!baseline) throw new Error('no baseline run to compare with');
      const run = await runFleet(suite!, fault, SETTINGS).catch((error: unknown) => {
        rows.push(failedRow(fault.name, error));
        throw error;
      });
      rows.push(faultRow(run, baseline));
      expect(fault.evidence(run), `${fault.name} left no trace: the fault did not happen as meant`).toBeDefined();
      expectSettled(run);
      expect(unmatched(baseline.keys, run.keys), 'events of the baseline missing').toEqual([]);
      expect(unmatched(run.keys, baseline.keys), 'events the baseline does not have').toEqual([]);
      expect(run.travels, 'travels where the baseline\'s are').toEqual(baseline.travels);
    }, 300_000);
  }
});
