import { describe, expect, it } from 'vitest';
import { EARTH_RADIUS_M } from '../geofences/fence-shape.ts';
import { EMPTY_SEGMENT_STATE, segmentTrips, type SegmentFix, type SegmentOutput, type SegmentState, type StopRecord, type TripRecord, type TripRules } from './trip-segmenter.ts';

const RULES: TripRules = { movingSpeedKmh: 5, useIgnition: false, minStopS: 300, minDistanceM: 200, minDurationS: 180, maxGapS: 3600, speedLimitKmh: null };
const T0 = Date.UTC(2026, 10, 2, 8, 0, 0);
const LAT0 = 45;
const LNG0 = 7;
/** Metres northwards as degrees of latitude (exact on the segmenter's sphere). */
const north = (m: number) => (m / EARTH_RADIUS_M) * (180 / Math.PI);

interface Leg {
  /** Seconds this leg lasts; a fix every `every` seconds (default 10). */
  seconds: number;
  kmh: number;
  ignition?: boolean | null;
  every?: number;
  alarmAt?: number;
}

/**
 * A scripted drive due north: each leg is a stretch at constant speed. A fix is taken at the start of
 * every step with the speed of the leg it is in; the place follows the speeds exactly.
 */
function drive(legs: Leg[], start = T0): SegmentFix[] {
  const fixes: SegmentFix[] = [];
  let t = start;
  let metres = 0;
  for (const leg of legs) {
    const every = leg.every ?? 10;
    for (let s = 0; s < leg.seconds; s += every) {
      fixes.push({ t, valid: true, lat: LAT0 + north(metres), lng: LNG0, speedKmh: leg.kmh, ignition: leg.ignition ?? null, odometerKm: null, alarm: leg.alarmAt === s ? 'hardBraking' : null });
      t += every * 1000;
      metres += (leg.kmh / 3.6) * every;
    }
  }
  return fixes;
}

const segment = (fixes: SegmentFix[], rules = RULES, prior: SegmentState = EMPTY_SEGMENT_STATE, geofenceAt: (lat: number, lng: number) => number | null = () => null) =>
  segmentTrips(prior, rules, fixes, () => null, geofenceAt);

/** The rows as the database would hold them after writing every output in order. */
function rowsAfter(outputs: SegmentOutput[]): { trips: TripRecord[]; stops: StopRecord[] } {
  const trips = new Map<number, TripRecord>();
  const stops = new Map<number, StopRecord>();
  for (const o of outputs) {
    for (const t of o.trips) trips.set(t.startTime, t);
    for (const s of o.stops) {
      if (s.endTime === s.startTime) stops.delete(s.startTime);
      else stops.set(s.startTime, s);
    }
  }
  return { trips: [...trips.values()].sort((a, b) => a.startTime - b.startTime), stops: [...stops.values()].sort((a, b) => a.startTime - b.startTime) };
}

const at = (s: number) => T0 + s * 1000;

describe('segmentTrips', () => {
  // Parked 10 min (ignition on for the last 290 s), 10 km at 60 km/h, parked 10 min (ignition on 60 s).
  const scripted = drive([
    { seconds: 300, kmh: 0, ignition: false },
    { seconds: 300, kmh: 0, ignition: true },
    { seconds: 600, kmh: 60, ignition: true },
    { seconds: 60, kmh: 0, ignition: true },
    { seconds: 540, kmh: 0, ignition: false },
  ]);

  it('cuts a scripted drive into a stop, a trip of known distance and duration, and a stop', () => {
    const { trips, stops } = rowsAfter([segment(scripted)]);
    expect(trips).toHaveLength(1);
    const trip = trips[0]!;
    // The trip leaves from the last still fix (590 s) and ends at the first still one (1200 s).
    expect(trip.startTime).toBe(at(590));
    expect(trip.endTime).toBe(at(1200));
    expect(trip.distanceM).toBeCloseTo(10_000, 0);
    expect(trip.drivingS).toBe(610);
    expect(trip.idleS).toBe(0);
    expect(trip.maxSpeedKmh).toBe(60);
    expect(stops.map((s) => [s.startTime, s.endTime])).toEqual([[at(0), at(590)], [at(1200), null]]);
    // Ignition on from 300 s to the departure at 590 s; 60 s after arrival (1200–1260 s).
    expect(stops[0]!.engineIdleS).toBe(290);
    expect(stops[1]!.engineIdleS).toBe(60);
    expect(stops[1]!.lastFixTime).toBe(at(1790));
  });

  it('gives the same rows whatever the batches, with the state round-tripped through JSON', () => {
    const whole = rowsAfter([segment(scripted)]);
    for (const size of [1, 7, 33, 61]) {
      let state: SegmentState = EMPTY_SEGMENT_STATE;
      const outputs: SegmentOutput[] = [];
      for (let i = 0; i < scripted.length; i += size) {
        const out = segment(scripted.slice(i, i + size), RULES, state);
        outputs.push(out);
        state = JSON.parse(JSON.stringify(out.state)) as SegmentState;
      }
      expect(rowsAfter(outputs)).toEqual(whole);
    }
  });

  it('shows a trip in progress with no end, then ends it once the vehicle has stood still for the minimum stop', () => {
    const first = segment(scripted.slice(0, 125)); // up to 1240 s: stopped at 1200 s, not yet 300 s still
    expect(first.trips).toHaveLength(1);
    expect(first.trips[0]).toMatchObject({ startTime: at(590), endTime: null, lastFixTime: at(1200) });
    const second = segment(scripted.slice(125, 150), RULES, first.state); // to 1490 s: 290 s still
    expect(second.trips.every((t) => t.endTime === null)).toBe(true);
    const third = segment(scripted.slice(150, 151), RULES, second.state); // 1500 s
    expect(third.trips[0]).toMatchObject({ endTime: at(1200) });
  });

  it('keeps a halt shorter than the minimum stop inside the trip, as idle time when the ignition is on', () => {
    const fixes = drive([
      { seconds: 60, kmh: 0, ignition: true },
      { seconds: 300, kmh: 50, ignition: true },
      { seconds: 120, kmh: 0, ignition: true }, // a red light
      { seconds: 300, kmh: 50, ignition: true },
      { seconds: 400, kmh: 0, ignition: false },
    ]);
    const { trips } = rowsAfter([segment(fixes)]);
    expect(trips).toHaveLength(1);
    // The interval into the halt (into a still fix) is driving, the halt's own intervals idle: 110 s.
    expect(trips[0]!.idleS).toBe(110);
    expect(trips[0]!.startTime).toBe(at(50));
    expect(trips[0]!.endTime).toBe(at(780));
    expect(trips[0]!.drivingS + trips[0]!.idleS).toBe(730);
  });

  it('merges a trip shorter than the minimum duration or distance into the stop around it', () => {
    const fixes = drive([
      { seconds: 200, kmh: 0, ignition: true },
      { seconds: 60, kmh: 20, ignition: true }, // 333 m in 60 s: far enough, too short in time
      { seconds: 600, kmh: 0, ignition: true },
    ]);
    const { trips, stops } = rowsAfter([segment(fixes)]);
    expect(trips).toEqual([]);
    expect(stops).toHaveLength(1);
    expect(stops[0]).toMatchObject({ startTime: at(0), endTime: null });
    // Every interval of the stop had the ignition on, but the hop's own were driving.
    expect(stops[0]!.engineIdleS).toBe(860 - 10 - 70);
  });

  it('ends a trip at its last fix when the tracker falls silent for longer than the maximum gap', () => {
    const before = drive([{ seconds: 60, kmh: 0 }, { seconds: 600, kmh: 40 }]);
    const resume = drive([{ seconds: 600, kmh: 40 }, { seconds: 400, kmh: 0 }], before[before.length - 1]!.t + 2 * 3600_000);
    const { trips, stops } = rowsAfter([segment([...before, ...resume])]);
    expect(trips).toHaveLength(2);
    expect(trips[0]).toMatchObject({ startTime: at(50), endTime: before[before.length - 1]!.t });
    expect(trips[1]).toMatchObject({ startTime: resume[0]!.t, endTime: resume[60]!.t });
    // The silence is a stop from the last fix before it to the first moving fix after it.
    expect(stops.map((s) => [s.startTime, s.endTime])).toEqual([[at(0), at(50)], [before[before.length - 1]!.t, resume[0]!.t], [resume[60]!.t, null]]);
  });

  it('measures distance by the odometer when both ends carry one', () => {
    const fixes = drive([{ seconds: 30, kmh: 0 }, { seconds: 600, kmh: 60 }, { seconds: 400, kmh: 0 }]).map((f, i) => ({ ...f, odometerKm: 1000 + i * 0.2 }));
    const { trips } = rowsAfter([segment(fixes)]);
    // Start at fix 2 (20 s), end at the first still fix (63): 61 steps of 0.2 km.
    expect(trips[0]!.distanceM).toBeCloseTo(61 * 200, 6);
  });

  it('counts overspeed seconds and harsh events in the trip', () => {
    const fixes = drive([
      { seconds: 30, kmh: 0 },
      { seconds: 300, kmh: 60 },
      { seconds: 120, kmh: 110, alarmAt: 50 },
      { seconds: 300, kmh: 60 },
      { seconds: 400, kmh: 0 },
    ]);
    const { trips } = rowsAfter([segment(fixes, { ...RULES, speedLimitKmh: 90 })]);
    expect(trips[0]!.overspeedS).toBe(120);
    expect(trips[0]!.harshEvents).toBe(1);
    expect(trips[0]!.maxSpeedKmh).toBe(110);
  });

  it('counts the harsh events it is given per fix (computed and tracker, once each), those at invalid fixes with the next valid one', () => {
    const fixes = drive([{ seconds: 30, kmh: 0 }, { seconds: 600, kmh: 60 }, { seconds: 400, kmh: 0 }]);
    // Two manoeuvres at one fix, one at a fix without GPS lock; a tracker alarm the caller counted as 0
    // (it continued a manoeuvre already counted) adds nothing.
    fixes[10] = { ...fixes[10]!, harshEvents: 2 };
    fixes[20] = { ...fixes[20]!, valid: false, harshEvents: 1 };
    fixes[30] = { ...fixes[30]!, alarm: 'hardBraking', harshEvents: 0 };
    const counted = fixes.map((f) => ({ ...f, harshEvents: f.harshEvents ?? 0 }));
    expect(rowsAfter([segment(counted)]).trips[0]!.harshEvents).toBe(3);
  });

  it('with useIgnition, a trip is ignition on to ignition off, speed or not', () => {
    const fixes = drive([
      { seconds: 60, kmh: 0, ignition: false },
      { seconds: 240, kmh: 0, ignition: true }, // warming up: in the trip, as idle
      { seconds: 300, kmh: 40, ignition: true },
      { seconds: 400, kmh: 0, ignition: false },
    ]);
    const { trips } = rowsAfter([segment(fixes, { ...RULES, useIgnition: true })]);
    expect(trips).toHaveLength(1);
    expect(trips[0]!.startTime).toBe(at(50));
    expect(trips[0]!.endTime).toBe(at(600));
    expect(trips[0]!.idleS).toBe(230);
  });

  it('ignores invalid fixes', () => {
    const fixes = scripted.map((f, i) => (i % 5 === 3 ? { ...f, valid: false, lat: 0, lng: 0, speedKmh: 200 } : f));
    const { trips } = rowsAfter([segment(fixes)]);
    expect(trips).toHaveLength(1);
    expect(trips[0]!.maxSpeedKmh).toBe(60);
    expect(trips[0]!.distanceM).toBeCloseTo(10_000, 0);
  });

  it('names the start and end geofence, and the stop\'s', () => {
    const home = (lat: number) => (lat < LAT0 + north(100) ? 7 : lat > LAT0 + north(9_900) ? 9 : null);
    const out = segment(scripted, RULES, EMPTY_SEGMENT_STATE, (lat) => home(lat));
    const { trips, stops } = rowsAfter([out]);
    expect(trips[0]).toMatchObject({ startGeofenceId: 7, endGeofenceId: 9 });
    expect(stops.map((s) => s.geofenceId)).toEqual([7, 9]);
  });
});

describe('the odometer', () => {
  it('is not used when it does not move (trackers send 0 when theirs is off) or runs backwards', () => {
    const legs = [{ seconds: 30, kmh: 0 }, { seconds: 600, kmh: 60 }, { seconds: 400, kmh: 0 }];
    for (const odometer of [() => 0, (i: number) => 5000 - i]) {
      const fixes = drive(legs).map((f, i) => ({ ...f, odometerKm: odometer(i) }));
      const { trips } = rowsAfter([segmentTrips(EMPTY_SEGMENT_STATE, RULES, fixes, () => null, () => null)]);
      expect(trips[0]!.distanceM).toBeCloseTo(10_000, 0); // the legs, start to end
    }
  });

  it("is the server's when the tracker sends none, and the tracker's when it does", () => {
    const legs = [{ seconds: 30, kmh: 0 }, { seconds: 600, kmh: 60 }, { seconds: 400, kmh: 0 }];
    // The server's odometer counts 150 m a fix (not the 166.7 m the legs measure), from 5 km.
    const server = drive(legs).map((f, i) => ({ ...f, serverOdometerM: 5000 + i * 150 }));
    // Start at fix 2 (20 s), end at the first still fix (63).
    expect(rowsAfter([segment(server)]).trips[0]!.distanceM).toBeCloseTo(61 * 150, 6);
    const both = server.map((f, i) => ({ ...f, odometerKm: 1000 + i * 0.2 }));
    expect(rowsAfter([segment(both)]).trips[0]!.distanceM).toBeCloseTo(61 * 200, 6);
  });
});
