import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../../db/database.ts';
import { databaseUrlFor } from '../../db/postgres-admin.ts';
import { createTravels, registerWebhook, scheduleParkedTravel, seedFleet, callApi } from './fleet-setup.ts';
import type { FleetRoles } from './fleet-roles.ts';
import type { FleetUnderTest } from './fleet-under-test.ts';
import {
  ackedButMissing, engineCursors, eventKey, lastFixTimes, loggedEvents, parkedTravel, storedPositions, travelStates, unmatched,
  type LoggedEvent, type TravelState,
} from './run-record.ts';
import { seededFleet, type SeededFleet } from './seeded-fleet.ts';
import { SeededTracker } from './seeded-tracker.ts';
import { WebhookReceiver } from './webhook-receiver.ts';

export interface RunSettings {
  seed: number;
  /** Where fix times count from: the same for every run of a suite (see suiteEpoch). */
  epoch: Date;
  vehicles: number;
  /** Every n-th vehicle speaks GT06, the others Teltonika. */
  gt06Every: number;
  fixesPerVehicle: number;
  /** Wall-clock ms between two fixes of a vehicle. */
  periodMs: number;
  travels: number;
  /** The fault starts this long after the trackers. */
  faultAtMs: number;
  /** The parked van's travel starts this long after the trackers: after every fault has ended. */
  parkedTravelAtMs: number;
  /** ETA_REFRESH_S of the processes: also the period of the engine's catch-up. */
  etaRefreshS: number;
  /** After the fleet's last fix is due, how long the run may take to settle before it is reported as stuck. */
  settleMs: number;
}

export interface FaultContext<F extends FleetUnderTest = FleetUnderTest> {
  fleet: F;
  /** The run's `fleet serve` processes. */
  roles: FleetRoles;
  receiver: WebhookReceiver;
  databaseName: string;
  /** Tells the run the fault is over (before a restarted process is ready), so catching up is timed from then. */
  ended(at: number): void;
}

/** When the fault began, and when the suite stopped causing it (a restart spawned, the server back). */
export interface FaultWindow {
  start: number;
  end: number;
  /** What the fault saw happen (a failover, a server marked down), for its evidence. */
  note?: string;
}

export interface Fault<F extends FleetUnderTest = FleetUnderTest> {
  name: string;
  /** What it does, one line. */
  does: string;
  inject(context: FaultContext<F>): Promise<FaultWindow>;
  /** Evidence from the run that the fault really bit, or undefined when nothing shows it did (the suite fails then). */
  evidence(run: RunResult): string | undefined;
}

export interface RunResult {
  fault: string;
  window: FaultWindow;
  fleetStart: number;
  fleet: SeededFleet;
  trackers: SeededTracker[];
  generated: number;
  acked: number;
  ackedLost: Array<{ imei: string; fixTime: string }>;
  positions: { rows: number; repeated: number };
  events: LoggedEvent[];
  /** Keys of the events compared with the baseline (see eventKey). */
  keys: string[];
  /** Keys logged more than once in this run. */
  duplicateKeys: string[];
  /** Events a webhook registered before them should have received and did not (ids). */
  undelivered: string[];
  receiver: { requests: number; badSignatures: number; refusals: number; stalled: number; abandoned: number; delivered: number };
  travels: TravelState[];
  parked: { startAt: number; status: number; estimatedAt: Date | null };
  recovery: {
    /** Fault end → the first fix acknowledged after it. */
    firstAckMs: number | undefined;
    /** Fault end → every fix generated before it acknowledged, evaluated, and its events delivered. */
    caughtUpMs: number | undefined;
    /** Fault end → the first API answer after it. */
    apiMs: number | undefined;
    /** Fault end → each stage caught up: fixes acknowledged, evaluated by the engine, their events delivered. */
    stagesMs: { acked: number | undefined; evaluated: number | undefined; delivered: number | undefined };
  };
  /** API answers through the run; `duringFault`: the good ones between the fault's start and end. */
  api: { ok: number; failed: number; duringFault: number };
  /** Nodes that died without the suite killing them. */
  crashed: string[];
  exits: Array<{ node: string; code: number | null; signal: NodeJS.Signals | null }>;
  processesStarted: number;
  /** Waits that ran out (the run did not settle): each one is a failure. */
  stuck: string[];
  logs: string;
  warnings: string[];
  durationMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it holds or `ms` pass; false when it never held. Errors (a database cut off) count as not yet. */
async function until(check: () => Promise<boolean> | boolean, ms: number, everyMs = 200): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await check()) return true;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}

/** The API as a client sees it: a request every 500 ms, each answer (or failure) with its time. */
function probeApi(baseUrl: string, key: string): { results: Array<{ at: number; ok: boolean }>; stop(): void } {
  const results: Array<{ at: number; ok: boolean }> = [];
  let stopped = false;
  void (async () => {
    while (!stopped) {
      const at = Date.now();
      const ok = await callApi(baseUrl, key, 'GET', '/devices/status').then((r) => r.status === 200, () => false);
      results.push({ at, ok });
      await sleep(500);
    }
  })();
  return { results, stop: () => (stopped = true) };
}

/** When each stage of the pipeline had caught up with what was generated before the fault ended (wall clock). */
export interface CatchUpStages {
  acked: number | undefined;
  evaluated: number | undefined;
  delivered: number | undefined;
}

/**
 * Watches the pipeline catch up with what was generated before the fault ended: every such fix
 * acknowledged, evaluated by the engine, and the events it caused delivered to the webhook.
 */
function watchCatchUp(
  database: DatabaseHandle, accountId: number, trackers: SeededTracker[], receiver: WebhookReceiver, faultEnd: () => number | undefined, parkedImei: string,
): { caughtUpAt: Promise<number | undefined>; stages: CatchUpStages; stop(): void } {
  let stopped = false;
  const stages: CatchUpStages = { acked: undefined, evaluated: undefined, delivered: undefined };
  const caughtUpAt = (async () => {
    while (!stopped) {
      try {
        const now = Date.now();
        const end = faultEnd();
        if (end === undefined) throw new Error('the fault is still on');
        const horizon = new Map<string, number>();
        let acked = true;
        for (const t of trackers) {
          const before = t.generatedAt.filter((at) => at < end).length;
          if (before === 0) continue;
          horizon.set(t.imei, t.vehicle.fixes[before - 1]!.time.getTime());
          for (let k = 0; k < before; k++) if (t.ackedAt[k] === undefined) acked = false;
        }
        if (acked) {
          stages.acked ??= now;
          const cursors = await engineCursors(database.db, accountId);
          if ([...horizon].every(([imei, t]) => (cursors.get(imei) ?? -1) >= t)) {
            stages.evaluated ??= now;
            const events = await loggedEvents(database.db, accountId);
            const owed = events.filter((e) => e.imei !== null && horizon.has(e.imei) && e.occurredAt.getTime() <= horizon.get(e.imei)! && eventKey(e, parkedImei) !== undefined);
            if (owed.every((e) => receiver.delivered.has(e.id))) {
              stages.delivered = now;
              return now;
            }
          }
        }
      } catch {
        // the database may be cut off: not caught up
      }
      await sleep(200);
    }
    return undefined;
  })();
  return { caughtUpAt, stages, stop: () => (stopped = true) };
}

/**
 * One run of the seeded fleet through the `fleet serve --roles` processes of `target` on a database
 * of its own and an empty Redis, with `fault` injected while it drives (none: the baseline). Returns
 * what the run stored, logged and delivered, for the checks.
 */
export async function runFleet<F extends FleetUnderTest>(target: F, fault: Fault<F> | undefined, settings: RunSettings): Promise<RunResult> {
  const began = Date.now();
  const fleet = seededFleet(settings);
  const databaseName = target.runDatabaseName();
  const admin = new pg.Client({ connectionString: target.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${databaseName} TEMPLATE ${target.templateDatabase}`);
  const databaseUrl = databaseUrlFor(target.adminUrl, databaseName);
  let database: DatabaseHandle | undefined;
  let roles: FleetRoles | undefined;
  let receiver: WebhookReceiver | undefined;
  const trackers: SeededTracker[] = [];
  try {
    database = await openDatabase({ databaseUrl, dataDir: '', embedded: 'own', poolSize: 3 });
    const tenant = await seedFleet(database.db, fleet);
    const started = await target.start(databaseName, {
      WEBHOOK_ALLOW_PRIVATE: 'true', ETA_REFRESH_S: String(settings.etaRefreshS), DEMO_SEED: 'false', DEMO_SIMULATE: 'false',
    });
    roles = started.roles;
    const baseUrl = started.apiUrl;

    receiver = await WebhookReceiver.start();
    receiver.useSecret(await registerWebhook(baseUrl, tenant.key, receiver.url));
    await createTravels(baseUrl, tenant.key, fleet);

    const fleetStart = Date.now();
    const parkedStartAt = fleetStart + settings.parkedTravelAtMs;
    const parkedTravelId = await scheduleParkedTravel(database.db, fleet, tenant, new Date(parkedStartAt));
    for (const [i, v] of [...fleet.vehicles, fleet.parked].entries()) {
      trackers.push(new SeededTracker(v, started.trackers, settings.periodMs, 250 + (i % 8) * 40));
    }
    // Spread over one period, as real trackers are not synchronised.
    trackers.forEach((t, i) => setTimeout(() => t.start(), (i * settings.periodMs) / trackers.length).unref());
    const api = probeApi(baseUrl, tenant.key);

    await sleep(Math.max(0, fleetStart + settings.faultAtMs - Date.now()));
    // Watched from the start of the fault: a restarted process's start-up counts in its recovery.
    let faultEnd: number | undefined;
    const watch = watchCatchUp(database, tenant.accountId, trackers, receiver, () => faultEnd, fleet.parked.imei);
    const window = fault
      ? await fault.inject({ fleet: target, roles, receiver, databaseName, ended: (at) => (faultEnd ??= at) })
      : { start: Date.now(), end: Date.now() };
    faultEnd ??= window.end;

    // Settle: every fix acknowledged, every one evaluated, the parked van's travel started by the
    // schedules and its ETA refreshed since, then every event delivered.
    const stuck: string[] = [];
    const fleetEnd = fleetStart + settings.fixesPerVehicle * settings.periodMs;
    const deadline = () => Math.max(5_000, fleetEnd + settings.settleMs - Date.now());
    if (!(await until(() => trackers.every((t) => t.done), deadline()))) stuck.push('fixes not acknowledged');
    const last = lastFixTimes(fleet);
    const db = database.db;
    const evaluated = async () => {
      const cursors = await engineCursors(db, tenant.accountId);
      return [...last].every(([imei, t]) => (cursors.get(imei) ?? -1) >= t);
    };
    if (!(await until(evaluated, deadline()))) {
      stuck.push('engine behind its fixes');
    }
    const etaFresh = async () => {
      const p = await parkedTravel(db, parkedTravelId);
      // In progress, and an ETA refresh later than the one its start made.
      return p.status === 1 && p.estimatedAt !== null && p.estimatedAt.getTime() > parkedStartAt + settings.etaRefreshS * 1000;
    };
    if (!(await until(etaFresh, deadline()))) stuck.push('parked travel not started, or its ETA not refreshed');
    const caughtUpAt = await Promise.race([watch.caughtUpAt, sleep(Math.max(1_000, deadline())).then(() => undefined)]);
    watch.stop();
    for (const t of trackers) t.stop();
    api.stop();
    await sleep(1_000); // the trackers' device.offline events
    const webhook = await db.selectFrom('webhooks').select('created_at').where('account_id', '=', tenant.accountId).executeTakeFirstOrThrow();
    const owed = async () => (await loggedEvents(db, tenant.accountId)).filter((e) => e.recordedAt >= webhook.created_at);
    if (!(await until(async () => (await owed()).every((e) => receiver!.delivered.has(e.id)), deadline()))) stuck.push('webhook deliveries outstanding');

    const events = await loggedEvents(db, tenant.accountId);
    const keys = events.map((e) => eventKey(e, fleet.parked.imei)).filter((k): k is string => k !== undefined).sort();
    const positions = await storedPositions(db, tenant.accountId);
    const firstAck = Math.min(...trackers.flatMap((t) => t.ackedAt.filter((at): at is number => at !== undefined && at >= window.end)));
    const firstApi = api.results.find((r) => r.ok && r.at >= window.end);
    const crashed = roles.crashed();
    const travels = await travelStates(db, tenant.accountId);
    const parked = await parkedTravel(db, parkedTravelId);
    const exits = await roles.stopAll();
    return {
      fault: fault?.name ?? 'none (baseline)',
      window,
      fleetStart,
      fleet,
      trackers,
      generated: trackers.reduce((n, t) => n + t.generated, 0),
      acked: trackers.reduce((n, t) => n + t.acknowledged, 0),
      ackedLost: ackedButMissing(trackers, positions.byImei),
      positions: { rows: positions.rows, repeated: positions.repeated },
      events,
      keys,
      duplicateKeys: unmatched(keys, [...new Set(keys)]),
      undelivered: (await owed()).filter((e) => !receiver!.delivered.has(e.id)).map((e) => e.id),
      receiver: { requests: receiver.requests, badSignatures: receiver.badSignatures, refusals: receiver.refusals, stalled: receiver.stalled, abandoned: receiver.abandoned, delivered: receiver.delivered.size },
      travels,
      parked: { startAt: parkedStartAt, ...parked },
      recovery: {
        firstAckMs: Number.isFinite(firstAck) ? firstAck - window.end : undefined,
        caughtUpMs: caughtUpAt === undefined ? undefined : Math.max(0, caughtUpAt - window.end),
        apiMs: firstApi ? Math.max(0, firstApi.at - window.end) : undefined,
        stagesMs: {
          acked: watch.stages.acked === undefined ? undefined : Math.max(0, watch.stages.acked - window.end),
          evaluated: watch.stages.evaluated === undefined ? undefined : Math.max(0, watch.stages.evaluated - window.end),
          delivered: watch.stages.delivered === undefined ? undefined : Math.max(0, watch.stages.delivered - window.end),
        },
      },
      api: {
        ok: api.results.filter((r) => r.ok).length,
        failed: api.results.filter((r) => !r.ok).length,
        duringFault: api.results.filter((r) => r.ok && r.at >= window.start && r.at <= window.end).length,
      },
      crashed,
      exits,
      processesStarted: roles.started,
      stuck,
      logs: roles.output(),
      warnings: roles.logLines(),
      durationMs: Date.now() - began,
    };
  } finally {
    for (const t of trackers) t.stop();
    await roles?.stopAll();
    await receiver?.close();
    await database?.close();
    await admin.query(`ALTER DATABASE ${databaseName} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

/** Ends every session of `databaseName` and refuses new ones until `reopen` (PostgreSQL's own switch). */
export async function cutOffDatabase(adminUrl: string, databaseName: string): Promise<{ reopen(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`ALTER DATABASE ${databaseName} WITH ALLOW_CONNECTIONS false`);
  await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [databaseName]);
  return {
    async reopen() {
      try {
        await admin.query(`ALTER DATABASE ${databaseName} WITH ALLOW_CONNECTIONS true`);
      } finally {
        await admin.end();
      }
    },
  };
}

