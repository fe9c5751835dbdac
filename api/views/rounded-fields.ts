import { z } from '@hono/zod-openapi';
import { COORDINATE_DECIMALS, HEADING_DECIMALS, KM_DECIMALS, METRE_DECIMALS, MINUTE_DECIMALS, SPEED_DECIMALS, VOLT_DECIMALS } from '../../domain/display-precision.ts';

/**
 * The OpenAPI fields of the numbers the API rounds (domain/display-precision.ts), each saying its
 * precision in its description, so the document and the answers agree in one place.
 */

const places = (n: number) => `${n} decimal${n === 1 ? '' : 's'}`;

export const COORDINATE_PRECISION = `degrees, ${places(COORDINATE_DECIMALS)} (about 1 cm)`;
export const KM_PRECISION = `km, ${places(KM_DECIMALS)} (1 m)`;
export const METRE_PRECISION = `metres, ${places(METRE_DECIMALS)}`;
export const SPEED_PRECISION = `km/h, ${places(SPEED_DECIMALS)}`;
export const HEADING_PRECISION = `degrees clockwise from north, ${places(HEADING_DECIMALS)}`;
export const VOLT_PRECISION = `volts to ${places(VOLT_DECIMALS)}`;
export const MINUTE_PRECISION = `minutes, ${places(MINUTE_DECIMALS)}`;

/** `<what it is>; <unit>, <n> decimals`. */
const described = (what: string, precision: string) => `${what}; ${precision}`;

const rounded = (precision: string) => (what: string, example?: number) =>
  z.number().openapi({ description: described(what, precision), ...(example === undefined ? {} : { example }) });

export const latitude = (what = 'Latitude', example = 19.4326) => rounded(COORDINATE_PRECISION)(what, example);
export const longitude = (what = 'Longitude', example = -99.1332) => rounded(COORDINATE_PRECISION)(what, example);
export const kilometres = rounded(KM_PRECISION);
export const metres = rounded(METRE_PRECISION);
export const speedKmh = rounded(SPEED_PRECISION);
export const heading = rounded(HEADING_PRECISION);
export const minutes = rounded(MINUTE_PRECISION);

/** A position as the API answers it: `{lat, lng}`, 7 decimals each. */
export const LatLngSchema = z.object({ lat: latitude(), lng: longitude() }).openapi('LatLng');
