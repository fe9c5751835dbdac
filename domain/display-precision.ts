/**
 * How many decimals the API answers each kind of number with. Stored values keep the precision they
 * arrived or were computed with; these rules apply where people and clients read them (API views,
 * exports, event payloads), so a vertex stored from `19.3687` reads `19.3687`, not `19.368699999999997`.
 *
 * Latitude and longitude 7 decimals (about 1 cm, finer than any GPS fix); kilometres 3 (1 m);
 * metres 1; speeds in km/h and headings 1; volts 2 (10 mV, what trackers measure); minutes 1 (6 s).
 * A value with fewer decimals (a tracker's whole km/h, an integer heading) comes back unchanged.
 */

/** A rounding that passes null through, so views can round a nullable column in one call. */
export interface Rounding {
  (value: number): number;
  (value: number | null): number | null;
}

/**
 * Rounds half away from zero to `places` decimals. Dividing the rounded integer by a power of ten
 * gives the double nearest to that decimal, which JSON prints with at most `places` decimals.
 */
export function roundTo(value: number, places: number): number {
  const factor = 10 ** places;
  const rounded = (Math.sign(value) * Math.round(Math.abs(value) * factor)) / factor;
  return rounded === 0 ? 0 : rounded; // no -0
}

const rounding = (places: number): Rounding =>
  ((value: number | null) => (value === null ? null : roundTo(value, places))) as Rounding;

export const COORDINATE_DECIMALS = 7;
export const KM_DECIMALS = 3;
export const METRE_DECIMALS = 1;
export const SPEED_DECIMALS = 1;
export const HEADING_DECIMALS = 1;
export const VOLT_DECIMALS = 2;
export const MINUTE_DECIMALS = 1;

/** Latitude or longitude in degrees, 7 decimals (about 1 cm). */
export const roundCoordinate = rounding(COORDINATE_DECIMALS);
/** Kilometres, 3 decimals (1 m). */
export const roundKm = rounding(KM_DECIMALS);
/** Metres, 1 decimal. */
export const roundMetres = rounding(METRE_DECIMALS);
/** km/h, 1 decimal. */
export const roundSpeedKmh = rounding(SPEED_DECIMALS);
/** Degrees clockwise from north, 1 decimal. */
export const roundHeading = rounding(HEADING_DECIMALS);
/** Volts, 2 decimals. */
export const roundVolts = rounding(VOLT_DECIMALS);
/** Minutes, 1 decimal. */
export const roundMinutes = rounding(MINUTE_DECIMALS);

/** Metres as kilometres to the metre. */
export const metresToKm = (metres: number) => roundKm(metres / 1000);
