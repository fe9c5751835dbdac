import { describe, expect, it } from 'vitest';
import { addressReusable, withKnownAddresses, type KnownAddress } from './address-reuse.ts';
import type { NewEvent } from '../events/event-payloads.ts';

/** Metres north as degrees of latitude (on the sphere haversineMetres uses). */
const north = (m: number) => (m / 6_371_008.771415) * (180 / Math.PI);

const DEPOT: KnownAddress = { address: 'Avenida Central 10, Toluca', latitude: 19.3, longitude: -99.6 };

describe('addressReusable', () => {
  it.each([
    ['the same point', 0, true],
    ['99 m away', 99, true],
    ['99.9 m away', 99.9, true],
    ['101 m away', 101, false],
    ['5 km away', 5_000, false],
  ])('%s with a reuse distance of 100 m: %s', (_, metres, reusable) => {
    expect(addressReusable(DEPOT, DEPOT.latitude + north(metres as number), DEPOT.longitude, 100)).toBe(reusable);
  });

  it('never reuses what is not known', () => {
    expect(addressReusable(null, DEPOT.latitude, DEPOT.longitude, 100)).toBe(false);
    expect(addressReusable(undefined, DEPOT.latitude, DEPOT.longitude, 100)).toBe(false);
  });

  it('reuses nothing at a distance of 0 but the very point', () => {
    expect(addressReusable(DEPOT, DEPOT.latitude, DEPOT.longitude, 0)).toBe(true);
    expect(addressReusable(DEPOT, DEPOT.latitude + north(1), DEPOT.longitude, 0)).toBe(false);
  });
});

describe('withKnownAddresses', () => {
  const at = (deviceId: number | undefined, lat: number): NewEvent => ({
    type: 'vehicle.ignition.on', occurredAt: new Date(0), ...(deviceId === undefined ? { accountId: 1 } : { deviceId }),
    position: { lat, lng: DEPOT.longitude, speedKmh: 0, heading: null, fixTime: new Date(0) }, dedupeKey: `k:${deviceId}:${lat}`,
  });

  it('gives each position its device\'s address when near the point it describes, else null', () => {
    const known = new Map([[1, DEPOT]]);
    const events = withKnownAddresses([at(1, DEPOT.latitude + north(50)), at(1, DEPOT.latitude + north(500)), at(2, DEPOT.latitude), at(undefined, DEPOT.latitude)], known, 100);
    expect(events.map((e) => e.position?.address)).toEqual([DEPOT.address, null, null, null]);
  });

  it('leaves an event without a position as it is', () => {
    const bare: NewEvent = { type: 'vehicle.panic', occurredAt: new Date(0), deviceId: 1, data: { alarm: 'sos' }, dedupeKey: 'p' };
    expect(withKnownAddresses([bare], new Map([[1, DEPOT]]), 100)).toEqual([bare]);
  });
});
