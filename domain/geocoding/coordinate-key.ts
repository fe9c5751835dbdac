/**
 * Decimals a cached answer's coordinates are rounded to: 4 decimals is 11 m of latitude (less of
 * longitude away from the equator), finer than any street address and coarse enough that a parked
 * vehicle's jittering fixes share one entry.
 */
export const CACHE_KEY_DECIMALS = 4;

/** The cache key of a point: its coordinates rounded to CACHE_KEY_DECIMALS, "19.4326,-99.1332". */
export function coordinateKey(latitude: number, longitude: number): string {
  return `${round(latitude)},${round(longitude)}`;
}

// A value just below zero rounds to "-0.0000"; written "0.0000" so both sides of the equator (or the
// prime meridian) share one key.
function round(value: number): string {
  const fixed = value.toFixed(CACHE_KEY_DECIMALS);
  return Number(fixed) === 0 ? (0).toFixed(CACHE_KEY_DECIMALS) : fixed;
}
