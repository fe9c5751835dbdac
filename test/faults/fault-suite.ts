import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/database.ts';
import { migrateToLatest } from '../../db/migrator.ts';
import { databaseUrlFor } from '../../db/postgres-admin.ts';
import { root } from '../support/fleet-process.ts';
import { failedRow, faultRow, faultTable, type FaultRow } from './fault-table.ts';
import { runFleet, type Fault, type RunResult, type RunSettings } from './fleet-run.ts';
import type { FleetUnderTest } from './fleet-under-test.ts';
import { unmatched } from './run-record.ts';
import { suiteEpoch } from './seeded-fleet.ts';

const SEED = 2026;

/** The seeded fleet every fault suite drives: the same timelines, so their tables compare. */
export function faultSettings(overrides: Partial<RunSettings> = {}): RunSettings {
  return {
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
    ...overrides,
  };
}

/** Makes `name` on `adminUrl`'s server, migrated: the template each run's database is copied from. */
export async function makeTemplateDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const handle = await openDatabase({ databaseUrl: databaseUrlFor(adminUrl, name), dataDir: '', embedded: 'own', poolSize: 1 });
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

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

export interface FaultSuite<F extends FleetUnderTest> {
  /** The describe block's title, and the table's heading. */
  title: string;
  /** What the fleet runs on, for the table's heading: `three processes on one Redis` … */
  where: string;
  /** test/artifacts/<artifact>: the table, what each fault did, per-stage times. */
  artifact: string;
  settings: RunSettings;
  /** Why the suite cannot run here, or undefined. */
  skipped?: string;
  /** Brings the fleet's servers up (once for the suite). */
  setUp(): Promise<F>;
  tearDown(fleet: F | undefined): Promise<void>;
  faults: Fault<F>[];
}

/**
 * The fault suite on one fleet under test: a baseline run, then one run per fault, each checked
 * against the baseline; one table at the end, printed and written to test/artifacts.
 */
export function describeFaultSuite<F extends FleetUnderTest>(suite: FaultSuite<F>): void {
  const { settings } = suite;
  const rows: FaultRow[] = [];
  let target: F | undefined;
  let baseline: RunResult | undefined;

  describe.skipIf(suite.skipped !== undefined)(`${suite.title}${suite.skipped ? ` (skipped: ${suite.skipped})` : ''}`, () => {
    beforeAll(async () => {
      target = await suite.setUp();
    }, 240_000);

    afterAll(async () => {
      if (rows.length > 0) {
        const table = faultTable(rows);
        const described = `${settings.vehicles} trackers (every ${settings.gt06Every}rd GT06, the rest Teltonika), ${settings.fixesPerVehicle} fixes each, one per ${settings.periodMs} ms (seed ${settings.seed}), ${suite.where}; the fault ${settings.faultAtMs / 1000} s in`;
        process.stdout.write(`\n${suite.title}: ${described}\n\n${table}\n\n`);
        mkdirSync(join(root, 'test/artifacts'), { recursive: true });
        const faults = suite.faults.map((f) => `- **${f.name}**: ${f.does}`).join('\n');
        const details = rows.map((r) => `- **${r.fault}**: ${r.detail}`).join('\n');
        writeFileSync(
          join(root, 'test/artifacts', suite.artifact),
          `# ${suite.title}\n\n${new Date().toISOString()}: ${described}.\n\n${faults}\n\n${table}\n\nTimes from the end of the fault (the restart spawned, the server back, the receiver answering).\n\n${details}\n`,
        );
      }
      await suite.tearDown(target);
    }, 180_000);

    it('baseline: the seeded fleet undisturbed', async () => {
      const run = await runFleet(target!, undefined, settings).catch((error: unknown) => {
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

    for (const fault of suite.faults) {
      it(`${fault.name}: ${fault.does}`, async () => {
        if (!baseline) throw new Error('no baseline run to compare with');
        const run = await runFleet(target!, fault, settings).catch((error: unknown) => {
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
}
