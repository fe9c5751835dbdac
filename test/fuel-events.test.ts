import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../runtime/seeded-random.ts';
import { fixtures } from '../simulators/fleet-records.ts';
import { teltonikaCodec8, teltonikaLogin, type SimulatedFix } from '../simulators/teltonika-packets.ts';
import { startEngineHarness, type EngineHarness } from './support/engine-harness.ts';
import { eventually } from './support/eventually.ts';
import { rawTracker } from './support/raw-tracker.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

// A Teltonika tracker on a vehicle's CAN bus (fuel level, IO 89) drives, parks while fuel is siphoned,
// drives on, refuels and drives again, over a real TCP connection through the engine; the refill and
// the drop are read back from GET /events, once each, and sending the whole day again logs nothing more.

let database: TestDatabase;
let harness: EngineHarness;
let key: string;

beforeAll(async () => {
  database = await openTestDatabase();
  harness = await startEngineHarness(database);
  key = (await fixtures(database.db).tenant()).key;
}, 60_000);
afterAll(async () => {
  await harness?.close();
  await database?.destroy();
});

async function api(path: string, init: { method?: string; body?: unknown } = {}) {
  const response = await harness.app.request(`/api/v1${path}`, {
    method: init.method ?? 'GET',
    headers: { Authorization: `Bearer ${key}`, ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

interface Leg {
  n: number;
  speedKmh: number;
  ignition: boolean;
  /** The level at the leg's first and last fix (linear in between). */
  from: number;
  to?: number;
}

/**
 * A fix every 30 s from `start`: the level with sensor jitter of ±2 points, and while driving a slosh of
 * up to ±8 points one fix in eight; a single glitch reading of 3 % while parked.
 */
function day(start: number, legs: Leg[]): SimulatedFix[] {
  const random = seededRandom(42);
  const fixes: SimulatedFix[] = [];
  let t = start;
  let lng = -99.13;
  for (const leg of legs) {
    for (let i = 0; i < leg.n; i++) {
      t += 30_000;
      if (leg.speedKmh > 0) lng += (leg.speedKmh / 3.6) * 30 / 105_000;
      let level = leg.from + ((leg.to ?? leg.from) - leg.from) * (leg.n === 1 ? 1 : i / (leg.n - 1)) + (random() * 4 - 2);
      if (leg.speedKmh > 0 && random() < 1 / 8) level += random() * 16 - 8;
      fixes.push({
        time: new Date(t), latitude: 19.43, longitude: lng, speedKmh: leg.speedKmh, heading: 90, satellites: 9, ignition: leg.ignition,
        fuelPercent: Math.max(0, Math.min(100, Math.round(level))),
      });
    }
  }
  return fixes;
}

/** Sends the fixes over one connection, ten records a packet, each packet acknowledged before the next. */
async function send(imei: string, fixes: SimulatedFix[]): Promise<void> {
  const tracker = await rawTracker(harness.teltonikaPort);
  try {
    tracker.send(teltonikaLogin(imei));
    expect([...(await tracker.read(1))]).toEqual([1]);
    for (let i = 0; i < fixes.length; i += 10) {
      const records = fixes.slice(i, i + 10);
      tracker.send(teltonikaCodec8(records));
      expect((await tracker.read(4)).readUInt32BE(0)).toBe(records.length);
    }
  } finally {
    tracker.end();
  }
}

const evaluatedThrough = (imei: string, time: Date) =>
  eventually(
    () => database.db.selectFrom('device_engine_states as e').innerJoin('devices as d', 'd.id', 'e.device_id')
      .select(['e.cursor_fix_time', 'e.fuel']).where('d.imei', '=', imei).executeTakeFirst(),
    (s) => expect(s?.cursor_fix_time?.getTime()).toBe(time.getTime()),
    30_000,
  );

async function fuelEvents(imei: string) {
  const { status, body } = await api(`/events?types=vehicle.fuel.*&deviceIds=${imei}&order=asc&limit=100`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body.data as any[];
}

describe('fuel events from a Teltonika tracker', () => {
  it('logs the siphoning while parked and the refill once each, not the drive\'s consumption, jitter or a glitch', async () => {
    const imei = '356307042440501';
    const created = await api('/vehicles', { method: 'POST', body: { imei, name: 'Tanker 5', fuel_tank_litres: 80 } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.fuel_tank_litres).toBe(80);

    const start = Date.now() - 4 * 3600_000;
    const fixes = day(start, [
      { n: 40, speedKmh: 60, ignition: true, from: 64, to: 58 }, // driving: consumption and slosh
      { n: 20, speedKmh: 0, ignition: false, from: 58 }, // parked
      { n: 6, speedKmh: 0, ignition: false, from: 57, to: 36 }, // siphoned
      { n: 20, speedKmh: 0, ignition: false, from: 36 },
      { n: 40, speedKmh: 60, ignition: true, from: 36, to: 30 },
      { n: 6, speedKmh: 0, ignition: false, from: 30 }, // at the pump
      { n: 6, speedKmh: 0, ignition: false, from: 33, to: 92 }, // refuelling
      { n: 6, speedKmh: 0, ignition: false, from: 92 },
      { n: 40, speedKmh: 60, ignition: true, from: 92, to: 86 },
    ]);
    // A glitch reading while parked: one jump says nothing.
    fixes[75]!.fuelPercent = 3;
    await send(imei, fixes);
    await evaluatedThrough(imei, fixes[fixes.length - 1]!.time);

    const events = await fuelEvents(imei);
    expect(events.map((e) => e.type)).toEqual(['vehicle.fuel.drop', 'vehicle.fuel.refill']);
    const [drop, refill] = events;
    expect(drop.data.vehicle).toMatchObject({ id: imei, name: 'Tanker 5' });
    expect(drop.data.fuel.fromPercent).toBeGreaterThan(55);
    expect(drop.data.fuel.fromPercent).toBeLessThan(61);
    expect(drop.data.fuel.toPercent).toBeGreaterThan(33);
    expect(drop.data.fuel.toPercent).toBeLessThan(39);
    expect(drop.data.fuel.amountPercent).toBeCloseTo(drop.data.fuel.fromPercent - drop.data.fuel.toPercent, 1);
    expect(drop.data.fuel.amountLitres).toBeCloseTo((drop.data.fuel.amountPercent * 80) / 100, 1);
    // Placed where the vehicle stood, during the stop.
    expect(drop.data.position).toMatchObject({ speedKmh: 0 });
    const dropAt = Date.parse(drop.timestamp);
    expect(dropAt).toBeGreaterThan(fixes[40]!.time.getTime());
    expect(dropAt).toBeLessThanOrEqual(fixes[85]!.time.getTime());

    expect(refill.data.fuel.fromPercent).toBeGreaterThan(27);
    expect(refill.data.fuel.fromPercent).toBeLessThan(34);
    expect(refill.data.fuel.toPercent).toBeGreaterThan(89);
    expect(refill.data.fuel.amountPercent).toBeGreaterThan(55);
    expect(refill.data.fuel.amountLitres).toBeCloseTo((refill.data.fuel.amountPercent * 80) / 100, 1);
    const refillAt = Date.parse(refill.timestamp);
    expect(refillAt).toBeGreaterThan(fixes[126]!.time.getTime());
    expect(refillAt).toBeLessThanOrEqual(fixes[143]!.time.getTime());

    // The tracker resends its whole day (it missed our acknowledgements): nothing more is logged.
    await send(imei, fixes);
    await new Promise((r) => setTimeout(r, 1_000));
    await evaluatedThrough(imei, fixes[fixes.length - 1]!.time);
    expect((await fuelEvents(imei)).map((e) => e.id)).toEqual(events.map((e) => e.id));

    // Late fixes (between fixes already evaluated) telling of a tank emptied while parked: stored, no fuel event.
    const late = fixes.slice(45, 60).map((f) => ({ ...f, time: new Date(f.time.getTime() + 15_000), fuelPercent: 5 }));
    await send(imei, late);
    await eventually(
      () => database.db.selectFrom('positions as p').innerJoin('devices as d', 'd.id', 'p.device_id').select((e) => e.fn.countAll<number>().as('n'))
        .where('d.imei', '=', imei).where('p.fix_time', 'in', late.map((f) => f.time)).executeTakeFirst(),
      (r) => expect(Number(r?.n)).toBe(late.length),
    );
    await eventually(
      () => database.db.selectFrom('late_fixes as l').innerJoin('devices as d', 'd.id', 'l.device_id').select('l.device_id').where('d.imei', '=', imei).execute(),
      (rows) => expect(rows).toEqual([]),
    );
    expect((await fuelEvents(imei)).map((e) => e.id)).toEqual(events.map((e) => e.id));
  }, 120_000);

  it('keeps no fuel state and logs no fuel event for a tracker that reports no fuel level', async () => {
    const imei = '356307042440502';
    expect((await api('/vehicles', { method: 'POST', body: { imei, name: 'Van 6' } })).status).toBe(201);
    const start = Date.now() - 3 * 3600_000;
    const fixes = day(start, [{ n: 20, speedKmh: 50, ignition: true, from: 50 }, { n: 20, speedKmh: 0, ignition: false, from: 20 }])
      .map(({ fuelPercent: _, ...f }) => f);
    await send(imei, fixes);
    const state = await evaluatedThrough(imei, fixes[fixes.length - 1]!.time);
    expect(state!.fuel).toBeNull();
    expect(await fuelEvents(imei)).toEqual([]);
  }, 60_000);
});
