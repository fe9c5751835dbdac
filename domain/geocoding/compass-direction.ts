/** The eight compass points, clockwise from north. */
export const COMPASS_POINTS = ['N', 'NE', 'E', 'SE', 'S', 'SW', 'W', 'NW'] as const;
export type CompassPoint = (typeof COMPASS_POINTS)[number];

const RAD = Math.PI / 180;

/**
 * The compass point of a bearing in degrees clockwise from north: each point owns the 45° sector
 * centred on it (N is 337.5°–22.5°), a boundary going to the next point clockwise.
 */
export function compassDirection(bearingDegrees: number): CompassPoint {
  const normalized = ((bearingDegrees % 360) + 360) % 360;
  return COMPASS_POINTS[Math.floor((normalized + 22.5) / 45) % 8]!;
}

/** The initial great-circle bearing from the first point to the second, degrees clockwise from north in [0, 360). */
export function initialBearing(fromLat: number, fromLng: number, toLat: number, toLng: number): number {
  const φ1 = fromLat * RAD;
  const φ2 = toLat * RAD;
  const Δλ = (toLng - fromLng) * RAD;
  const y = Math.sin(Δλ) * Math.cos(φ2);
  const x = Math.cos(φ1) * Math.sin(φ2) - Math.sin(φ1) * Math.cos(φ2) * Math.cos(Δλ);
  return ((Math.atan2(y, x) / RAD) % 360 + 360) % 360;
}
