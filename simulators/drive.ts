import type { SimulatedFix } from './teltonika-packets.ts';

export interface Point {
  latitude: number;
  longitude: number;
}

const EARTH_RADIUS_M = 6_371_000;
const rad = (d: number) => (d * Math.PI) / 180;
const deg = (r: number) => (r * 180) / Math.PI;

export function distanceMeters(a: Point, b: Point): number {
  const dLat = rad(b.latitude - a.latitude);
  const dLng = rad(b.longitude - a.longitude);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.latitude)) * Math.cos(rad(b.latitude)) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function bearingDegrees(a: Point, b: Point): number {
  const y = Math.sin(rad(b.longitude - a.longitude)) * Math.cos(rad(b.latitude));
  const x = Math.cos(rad(a.latitude)) * Math.sin(rad(b.latitude)) - Math.sin(rad(a.latitude)) * Math.cos(rad(b.latitude)) * Math.cos(rad(b.longitude - a.longitude));
  return (deg(Math.atan2(y, x)) + 360) % 360;
}

function towards(a: Point, b: Point, meters: number): Point {
  const total = distanceMeters(a, b);
  if (total <= meters || total === 0) return { ...b };
  const f = meters / total;
  return { latitude: a.latitude + (b.latitude - a.latitude) * f, longitude: a.longitude + (b.longitude - a.longitude) * f };
}

/**
 * A vehicle driving from stop to stop: cruising at a varying speed, then parked with the ignition off
 * for a while at each stop, then off to the next (chosen at random among `stops`).
 */
export class Drive {
  private position: Point;
  private target: Point;
  private speedKmh = 0;
  private parkedUntil = 0;
  private odometer = 0;
  private heading = 0;

  constructor(
    private readonly stops: Point[],
    private readonly random: () => number,
    start: Point,
  ) {
    this.position = { ...start };
    this.target = this.pickStop();
  }

  private pickStop(): Point {
    return this.stops[Math.floor(this.random() * this.stops.length)]!;
  }

  /**
   * Moves the vehicle `seconds` forward in time to `now` and says what its tracker reports. With the
   * engine cut (its relay open) the vehicle brakes to a stop, about 10 km/h a second, and stays there.
   */
  advance(now: Date, seconds: number, engineCut = false): SimulatedFix {
    const parked = now.getTime() < this.parkedUntil;
    if (parked) {
      this.speedKmh = 0;
    } else if (engineCut) {
      const slower = Math.max(0, this.speedKmh - 10 * seconds);
      const step = ((this.speedKmh + slower) / 2 / 3.6) * seconds;
      const next = towards(this.position, this.target, step);
      this.odometer += distanceMeters(this.position, next);
      this.position = next;
      this.speedKmh = slower;
    } else {
      // Speed drifts around a cruising speed, like traffic does.
      this.speedKmh = Math.max(15, Math.min(90, (this.speedKmh || 35) + (this.random() - 0.5) * 20));
      const step = (this.speedKmh / 3.6) * seconds;
      this.heading = bearingDegrees(this.position, this.target);
      const next = towards(this.position, this.target, step);
      this.odometer += distanceMeters(this.position, next);
      this.position = next;
      if (distanceMeters(this.position, this.target) < 1) {
        this.parkedUntil = now.getTime() + (60 + this.random() * 240) * 1000;
        this.target = this.pickStop();
        this.speedKmh = 0;
      }
    }
    return {
      time: now,
      latitude: Math.round(this.position.latitude * 1e6) / 1e6,
      longitude: Math.round(this.position.longitude * 1e6) / 1e6,
      altitude: 2240,
      speedKmh: Math.round(this.speedKmh),
      heading: Math.round(this.heading),
      satellites: 7 + Math.floor(this.random() * 6),
      ignition: !parked,
      power: parked ? 12.4 : 13.8,
      odometer: Math.round(this.odometer),
    };
  }
}
