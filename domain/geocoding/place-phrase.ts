import { compassDirection, initialBearing } from './compass-direction.ts';
import { haversineMetres } from '../geofences/fence-shape.ts';

/** A named place as the offline gazetteer knows it: its point and the names of what it lies in. */
export interface Place {
  name: string;
  latitude: number;
  longitude: number;
  /** First-level division (state, prefecture, region), empty when GeoNames gives none. */
  region: string;
  /** Second-level division (county, municipality), empty when GeoNames gives none. */
  district: string;
  /** ISO 3166-1 alpha-2 code. */
  country: string;
}

/**
 * A point within this distance of a place's GeoNames point counts as in the place. The gazetteer
 * (GeoNames cities1000) gives each place one point and no population, area or outline, so the rule
 * is one radius, that of the smallest places listed: 1,000 people at a small town's 1,500 a km² is
 * 0.67 km², a disc of about 460 m. Large cities are listed through their boroughs and districts as
 * well, each a point of its own, so a point in a city is within a few km of one of them.
 */
export const IN_PLACE_RADIUS_M = 500;

/**
 * Beyond this distance from every place there is no address to give (open sea, ice, desert): a
 * phrase like "180 km W of …" names nothing a reader could use, so the answer is null.
 */
export const NO_PLACE_BEYOND_M = 50_000;

/** "Coyoacán, Ciudad de México, MX": the place, its district and region where they add something, its country. */
export function placeName(place: Place): string {
  const parts = [place.name];
  if (place.district && place.district !== place.name && place.district !== place.region) parts.push(place.district);
  if (place.region && place.region !== place.name) parts.push(place.region);
  if (place.country) parts.push(place.country);
  return parts.join(', ');
}

/** "350 m" under 1 km (to the 10 m), "2.1 km" to the 100 m below 100 km, whole kilometres above. */
export function distancePhrase(metres: number): string {
  if (metres < 995) return `${Math.max(10, Math.round(metres / 10) * 10)} m`;
  const km = metres / 1000;
  return km < 99.95 ? `${km.toFixed(1)} km` : `${Math.round(km)} km`;
}

/**
 * The address of a point by its nearest place: the place's name when the point is in it
 * (IN_PLACE_RADIUS_M), else "2.1 km NE of Coyoacán, Ciudad de México, MX" with the direction from
 * the place to the point; null beyond NO_PLACE_BEYOND_M.
 */
export function describeNearPlace(latitude: number, longitude: number, place: Place): string | null {
  const metres = haversineMetres(place.latitude, place.longitude, latitude, longitude);
  if (metres > NO_PLACE_BEYOND_M) return null;
  if (metres <= IN_PLACE_RADIUS_M) return placeName(place);
  const direction = compassDirection(initialBearing(place.latitude, place.longitude, latitude, longitude));
  return `${distancePhrase(metres)} ${direction} of ${placeName(place)}`;
}
