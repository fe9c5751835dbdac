/**
 * The address in each online provider's documented reverse-geocoding answer. Each returns the
 * address, null when the provider answered but has none for the point, and throws
 * ProviderAnswerError when the body is not the provider's shape (a proxy's error page, a changed API).
 */
export class ProviderAnswerError extends Error {
  override readonly name = 'ProviderAnswerError';
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * Nominatim `/reverse?format=jsonv2`: one place whose `display_name` is the full address
 * ("Avenida 5 de Mayo, Centro, Cuauhtémoc, Ciudad de México, 06000, México"), or
 * `{"error": "Unable to geocode"}` where OSM has nothing near (at sea).
 */
export function nominatimAddress(body: unknown): string | null {
  if (!isObject(body)) throw new ProviderAnswerError('a Nominatim answer is a JSON object');
  if ('error' in body) return null;
  const displayName = text(body.display_name);
  if (!displayName) throw new ProviderAnswerError('a Nominatim answer has a display_name or an error');
  return displayName;
}

/** The `features` of a GeoJSON FeatureCollection, as Photon and Pelias answer. */
function features(body: unknown, provider: string): unknown[] {
  if (!isObject(body) || !Array.isArray(body.features)) {
    throw new ProviderAnswerError(`a ${provider} answer is a GeoJSON FeatureCollection with features`);
  }
  return body.features;
}

function firstProperties(body: unknown, provider: string): Json | null {
  const first = features(body, provider)[0];
  if (first === undefined) return null;
  if (!isObject(first) || !isObject(first.properties)) throw new ProviderAnswerError(`a ${provider} feature has properties`);
  return first.properties;
}

/**
 * Photon `/reverse`: the first feature's properties put together, as Photon gives no one-line
 * address: its name (a shop, a building) when it has one, "street housenumber", then city, state
 * and country, each once. No feature: nothing near.
 */
export function photonAddress(body: unknown): string | null {
  const properties = firstProperties(body, 'Photon');
  if (!properties) return null;
  const street = [text(properties.street), text(properties.housenumber)].filter(Boolean).join(' ');
  const parts: string[] = [];
  for (const part of [text(properties.name), street, text(properties.city), text(properties.state), text(properties.country)]) {
    if (part && !parts.includes(part)) parts.push(part);
  }
  return parts.length > 0 ? parts.join(', ') : null;
}

/** Pelias `/v1/reverse`: the first feature's `label`, which Pelias formats for the country. No feature: nothing near. */
export function peliasAddress(body: unknown): string | null {
  const properties = firstProperties(body, 'Pelias');
  if (!properties) return null;
  const label = text(properties.label);
  if (!label) throw new ProviderAnswerError('a Pelias feature has a label');
  return label;
}
