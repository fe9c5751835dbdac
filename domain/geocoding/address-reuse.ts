import { haversineMetres } from '../geofences/fence-shape.ts';
import type { NewEvent } from '../events/event-payloads.ts';

/** An address and the point it was looked up for. */
export interface KnownAddress {
  address: string;
  latitude: number;
  longitude: number;
}

/**
 * The known address still describes a point within `reuseM` of where it was looked up: a vehicle that
 * moved less keeps it without a lookup, and an event there carries it.
 */
export function addressReusable(known: KnownAddress | null | undefined, latitude: number, longitude: number, reuseM: number): known is KnownAddress {
  return known != null && haversineMetres(known.latitude, known.longitude, latitude, longitude) <= reuseM;
}

/**
 * The events with each position's `address`: the device's known address when its point is within
 * `reuseM` of the event's position, else null. An event is logged once, so it carries the address
 * known when it was logged; one looked up later is not added to it.
 */
export function withKnownAddresses(events: readonly NewEvent[], known: ReadonlyMap<number, KnownAddress>, reuseM: number): NewEvent[] {
  return events.map((e) => {
    if (!e.position) return e;
    const address = e.deviceId === undefined ? undefined : known.get(e.deviceId);
    return { ...e, position: { ...e.position, address: addressReusable(address, e.position.lat, e.position.lng, reuseM) ? address.address : null } };
  });
}
