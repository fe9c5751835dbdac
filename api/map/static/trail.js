// A vehicle's trail for the last hour, from its position history (GET /vehicles/{id}/positions).

export const TRAIL_MS = 3_600_000;

/** Minutes east of UTC in an ISO time's offset: `…-06:00` is -360, `…Z` is 0. */
function offsetMinutes(isoTime) {
  const match = /([+-])(\d{2}):?(\d{2})$/.exec(isoTime);
  if (!match) return 0;
  return (match[1] === '-' ? -1 : 1) * (Number(match[2]) * 60 + Number(match[3]));
}

/** An instant as wall-clock time at `offset` minutes from UTC: `2024-05-01T08:30:05`. */
const wallClock = (instantMs, offset) => new Date(instantMs + offset * 60_000).toISOString().slice(0, 19);

/**
 * Loads trails. The history endpoint reads from/to as wall-clock time in the key's user's timezone,
 * which the page is not told; its JSON fix times carry that zone's offset, so the first trail learns
 * it from one fix of the default range (the last 24 hours).
 */
export function trailLoader(api) {
  let userOffset;

  /** The vehicle's valid fixes of the last hour, oldest first: `{at, lat, lng}`. */
  return async function lastHour(deviceId) {
    const path = `/vehicles/${encodeURIComponent(deviceId)}/positions`;
    if (userOffset === undefined) {
      const first = (await api.get(`${path}?limit=1`)).data[0];
      if (!first) return []; // nothing in 24 hours, so nothing in the last hour
      userOffset = offsetMinutes(first.fixTime);
    }
    const now = Date.now();
    // An hour wider on each side, so a daylight-saving change since the offset was learned cannot
    // cut the hour short; the fixes' own UTC times pick out the hour exactly.
    const query = new URLSearchParams({
      format: 'geojson',
      simplify: '2', // metres: drops fixes that add nothing to the line, such as a parked vehicle's
      from: wallClock(now - 2 * TRAIL_MS, userOffset),
      to: wallClock(now + TRAIL_MS, userOffset),
    });
    const collection = await api.get(`${path}?${query}`);
    return collection.features
      .filter((f) => f.properties.kind === 'fix')
      .map((f) => ({ at: Date.parse(f.properties.fixTime), lat: f.geometry.coordinates[1], lng: f.geometry.coordinates[0] }))
      .filter((p) => p.at >= now - TRAIL_MS);
  };
}
