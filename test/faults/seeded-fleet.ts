import type { GeofenceShape } from '../../db/geofence-shape.ts';
import { haversineMetres } from '../../domain/geofences/fence-shape.ts';
import { seededRandom } from '../../runtime/seeded-random.ts';
import { Drive, type Point } from '../../simulators/drive.ts';
import type { SimulatedFix } from '../../simulators/teltonika-packets.ts';

/**
 * The fault suite's fleet, a pure function of its seed: geofences over a few kilometres of Mexico City,
 * and per vehicle the whole timeline of fixes it will report (positions, speeds, ignition, and fix
 * times counted from a seeded epoch, never the wall clock), plus the travels the API is asked for.
 * Two runs of the same seed send the same fixes, so an undisturbed run's events are the yardstick of
 * a disturbed one, row for row.
 */

export interface FleetPlace {
  name: string;
  shape: GeofenceShape;
  /** Seconds inside (outside) before an enter (exit) counts; set in SQL as the README says. */
  dwellS?: number;
}

export interface FleetVehicle {
  imei: string;
  name: string;
  protocol: 'teltonika' | 'gt06';
  fixes: SimulatedFix[];
  /** Geofence names of a travel through the places this vehicle's drive enters, in order; empty for none. */
  travel: Array<{ geofence: string; expectedArrival: Date }>;
}

export interface SeededFleet {
  seed: number;
  /** Fix times count from here (a whole minute, so the API's minute-resolution travel start can name it); never from a run's clock. */
  epoch: Date;
  places: FleetPlace[];
  vehicles: FleetVehicle[];
  /** A vehicle that reports once, parked outside every place, then stays silent: the probe of the engine's schedules. */
  parked: FleetVehicle;
  speedLimitKmh: number;
}

const CENTER = { lat: 19.4, lng: -99.15 };
const SPACING = 0.012; // ~1.3 km between neighbouring places
const CIRCLE_M = 300;
const SQUARE_HALF = 0.0026; // ~290 m
/** Simulated seconds between two fixes of a vehicle (the wall-clock period is the run's choice). */
export const FIX_INTERVAL_MS = 10_000;

function place(i: number): FleetPlace {
  const lat = CENTER.lat + Math.floor(i / 4) * SPACING;
  const lng = CENTER.lng + (i % 4) * SPACING;
  const name = `Place ${i + 1}`;
  if (i % 2 === 0) return { name, shape: { kind: 'circle', lat, lng, radiusMeters: CIRCLE_M } };
  const ring = [[lng - SQUARE_HALF, lat - SQUARE_HALF], [lng + SQUARE_HALF, lat - SQUARE_HALF], [lng + SQUARE_HALF, lat + SQUARE_HALF], [lng - SQUARE_HALF, lat + SQUARE_HALF], [lng - SQUARE_HALF, lat - SQUARE_HALF]];
  return { name, shape: { kind: 'polygon', geometry: { type: 'Polygon', coordinates: [ring] } }, ...(i === 5 ? { dwellS: 30 } : {}) };
}

function centerOf(p: FleetPlace): Point {
  if (p.shape.kind === 'circle') return { latitude: p.shape.lat, longitude: p.shape.lng };
  const ring = (p.shape.geometry.coordinates as number[][][])[0]!;
  return { latitude: (ring[0]![1]! + ring[2]![1]!) / 2, longitude: (ring[0]![0]! + ring[2]![0]!) / 2 };
}

/** Inside a place as the engine decides it: circles by great-circle distance, squares by their box. */
function inside(p: FleetPlace, fix: { latitude: number; longitude: number }): boolean {
  if (p.shape.kind === 'circle') return haversineMetres(p.shape.lat, p.shape.lng, fix.latitude, fix.longitude) <= p.shape.radiusMeters;
  const ring = (p.shape.geometry.coordinates as number[][][])[0]!;
  return fix.longitude >= ring[0]![0]! && fix.longitude <= ring[2]![0]! && fix.latitude >= ring[0]![1]! && fix.latitude <= ring[2]![1]!;
}

/** The places a timeline enters after its first fix, in order, each once (what a travel through them expects). */
function placesEntered(places: FleetPlace[], fixes: SimulatedFix[]): Array<{ place: FleetPlace; at: Date }> {
  const entered: Array<{ place: FleetPlace; at: Date }> = [];
  for (const p of places) {
    if (p.dwellS) continue; // a dwell time moves the arrival; keep travels to the plain places
    for (let k = 1; k < fixes.length; k++) {
      if (inside(p, fixes[k]!) && !inside(p, fixes[k - 1]!)) {
        entered.push({ place: p, at: fixes[k]!.time });
        break;
      }
    }
  }
  return entered.sort((a, b) => a.at.getTime() - b.at.getTime());
}

/** The vehicle number `index` of a seed's fleet: 15 digits, `35`, 4 of the seed, 9 of the index. */
export function fleetImei(seed: number, index: number): string {
  return `35${String(seed % 10_000).padStart(4, '0')}${String(index + 1).padStart(9, '0')}`;
}

/**
 * The epoch of a suite's runs: the hour before the suite started, plus the seed's minutes. Fixed for
 * the whole suite (every run sends the same fix times), and recent, as live trackers' fixes are: they
 * go to the day's position partition, well inside POSITIONS_RETENTION_DAYS, as in production.
 */
export function suiteEpoch(suiteStart: number, seed: number): Date {
  return new Date(Math.floor(suiteStart / 3_600_000) * 3_600_000 - 3_600_000 + (seed % 30) * 60_000);
}

export function seededFleet(options: { seed: number; epoch: Date; vehicles: number; gt06Every: number; fixesPerVehicle: number; travels: number }): SeededFleet {
  const { seed, epoch } = options;
  const places = Array.from({ length: 12 }, (_, i) => place(i));
  // A district over the western half: long crossings that the small places sit inside.
  const west = CENTER.lng - 0.006;
  const east = CENTER.lng + SPACING * 1.5;
  const south = CENTER.lat - 0.006;
  const north = CENTER.lat + SPACING * 2 + 0.006;
  places.push({ name: 'District West', shape: { kind: 'polygon', geometry: { type: 'Polygon', coordinates: [[[west, south], [east, south], [east, north], [west, north], [west, south]]] } } });
  const stops = places.slice(0, 12).map(centerOf);

  const vehicles: FleetVehicle[] = [];
  for (let v = 0; v < options.vehicles; v++) {
    const random = seededRandom(seed * 100_003 + v);
    const start = stops[Math.floor(random() * stops.length)]!;
    const drive = new Drive(stops, random, start);
    const protocol = v % options.gt06Every === options.gt06Every - 1 ? 'gt06' : 'teltonika';
    // Whole seconds (GT06 carries no milliseconds), staggered per vehicle.
    const first = epoch.getTime() + 60_000 + v * 1_000;
    const fixes = Array.from({ length: options.fixesPerVehicle }, (_, k) => drive.advance(new Date(first + k * FIX_INTERVAL_MS), FIX_INTERVAL_MS / 1000));
    const travel = v < options.travels
      ? placesEntered(places.slice(0, 12), fixes).slice(0, 2).map((e, i) => ({
          geofence: e.place.name,
          // A few minutes after the drive gets there, on the minute the API speaks in.
          expectedArrival: new Date(Math.ceil(e.at.getTime() / 60_000) * 60_000 + (i + 5) * 60_000),
        }))
      : [];
    vehicles.push({ imei: fleetImei(seed, v), name: `Truck ${v + 1}`, protocol, fixes, travel });
  }

  // South of everything: outside every place, so it logs no crossing.
  const parkedAt = { latitude: CENTER.lat - 0.02, longitude: CENTER.lng + 0.01 };
  const parked: FleetVehicle = {
    imei: fleetImei(seed, options.vehicles),
    name: 'Parked van',
    protocol: 'teltonika',
    fixes: [{ time: new Date(epoch.getTime() + 60_000), ...parkedAt, altitude: 2240, speedKmh: 0, heading: 0, satellites: 9, ignition: false, power: 12.4, odometer: 0 }],
    travel: [],
  };
  return { seed, epoch, places, vehicles, parked, speedLimitKmh: 60 };
}

/** The place a travel of the parked van waits for: one it never reaches. */
export function farPlace(fleet: SeededFleet): FleetPlace {
  return fleet.places[11]!;
}
