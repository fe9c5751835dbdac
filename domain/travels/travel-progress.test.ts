import { describe, expect, it } from 'vitest';
import type { Crossing } from '../geofences/fence-crossings.ts';
import { estimateArrivals } from './travel-eta.ts';
import { arrivalsFromCrossings, type WaypointProgress } from './travel-progress.ts';

const waypoints: WaypointProgress[] = [
  { seq: 1, geofenceId: null, status: 'completed' },
  { seq: 2, geofenceId: 10, status: 'pending' },
  { seq: 3, geofenceId: 20, status: 'pending' },
  { seq: 4, geofenceId: 30, status: 'pending' },
];
const enter = (geofenceId: number, fixTime: number): Crossing => ({ geofenceId, type: 'enter', fixTime, latitude: 0, longitude: 0 });
const exit = (geofenceId: number, fixTime: number): Crossing => ({ geofenceId, type: 'exit', fixTime, latitude: 0, longitude: 0 });

describe('arrivalsFromCrossings', () => {
  it.each([
    { what: 'in order, all three', crossings: [enter(10, 100), exit(10, 150), enter(20, 200), enter(30, 300)], arrivals: [[2, 100], [3, 200], [4, 300]], completed: true },
    { what: 'a later waypoint first completes nothing', crossings: [enter(20, 100), enter(10, 200), enter(30, 300)], arrivals: [[2, 200]], completed: false },
    { what: 'coming back to a later one after the next counts', crossings: [enter(20, 100), enter(10, 200), enter(20, 300)], arrivals: [[2, 200], [3, 300]], completed: false },
    { what: 'exits complete nothing', crossings: [exit(10, 100)], arrivals: [], completed: false },
    { what: 'an enter before the start does not count', crossings: [enter(10, 40), enter(10, 60)], arrivals: [[2, 60]], completed: false },
  ])('$what', ({ crossings, arrivals, completed }) => {
    const result = arrivalsFromCrossings(waypoints, 50, crossings);
    expect(result.arrivals.map((a) => [a.seq, a.arrivedAt])).toEqual(arrivals);
    expect(result.completed).toBe(completed);
  });

  it('continues from where an earlier evaluation left off', () => {
    const progressed = waypoints.map((w) => (w.seq === 2 ? { ...w, status: 'completed' as const } : w));
    expect(arrivalsFromCrossings(progressed, 0, [enter(10, 100), enter(20, 200)]).arrivals).toEqual([{ seq: 3, arrivedAt: 200 }]);
  });
});

describe('estimateArrivals', () => {
  const settings = { roadFactor: 1.3, defaultSpeedKmh: 40 };
  // One degree of latitude on the engine's sphere is 111.195 km.
  const stops = [{ seq: 2, latitude: 1, longitude: 0 }, { seq: 3, latitude: 2, longitude: 0 }];

  it('adds the chain of great-circle legs, times the road factor, at the recent moving speed', () => {
    const [first, second] = estimateArrivals({ latitude: 0, longitude: 0 }, 0, stops, 60, settings);
    const hoursPerLeg = (111.195 * 1.3) / 60;
    expect(first!.estimatedArrival / 3_600_000).toBeCloseTo(hoursPerLeg, 3);
    expect(second!.estimatedArrival / 3_600_000).toBeCloseTo(2 * hoursPerLeg, 3);
  });

  it('falls back to the default speed when the vehicle has not moved recently', () => {
    const [first] = estimateArrivals({ latitude: 0, longitude: 0 }, 1_000, stops, null, settings);
    expect((first!.estimatedArrival - 1_000) / 3_600_000).toBeCloseTo((111.195 * 1.3) / 40, 3);
  });
});
