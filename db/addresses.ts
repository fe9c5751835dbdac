import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.ts';
import type { KnownAddress } from '../domain/geocoding/address-reuse.ts';

/**
 * Reverse-geocoded addresses, kept by the engine's address keeper after the commit. Each claim is a
 * short statement that marks rows `address_due_at = now() + lease` (skipping rows another process or
 * ingest holds), so several engine processes share the work and a lookup runs with no lock held; a
 * result clears the claim, a failed lookup sets when to try again.
 */

/** Great-circle metres between two points, in SQL (haversine, the same sphere as domain/geofences/fence-shape.ts). */
function metresBetween(lat1: RawBuilder<unknown>, lng1: RawBuilder<unknown>, lat2: RawBuilder<unknown>, lng2: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`(2 * 6371008.771415 * asin(sqrt(
    power(sin(radians(${lat2} - ${lat1}) / 2), 2) + cos(radians(${lat1})) * cos(radians(${lat2})) * power(sin(radians(${lng2} - ${lng1}) / 2), 2))))`;
}

export interface DeviceToAddress {
  deviceId: number;
  latitude: number;
  longitude: number;
}

/**
 * Claims up to `limit` devices whose latest fix is valid and farther than `reuseM` from the point
 * their address was looked up for (or that have none), until `leaseMs` from now.
 */
export async function claimDevicesToAddress(db: Db, reuseM: number, limit: number, leaseMs: number): Promise<DeviceToAddress[]> {
  const { rows } = await sql<{ device_id: number; latitude: number; longitude: number }>`
    UPDATE device_states s SET address_due_at = now() + ${leaseMs}::float8 * interval '1 millisecond'
    FROM (
      SELECT device_id FROM device_states
      WHERE valid AND latitude IS NOT NULL AND longitude IS NOT NULL
        AND (address_due_at IS NULL OR address_due_at <= now())
        AND (address_latitude IS NULL OR address_longitude IS NULL
          OR ${metresBetween(sql.ref('latitude'), sql.ref('longitude'), sql.ref('address_latitude'), sql.ref('address_longitude'))} > ${reuseM}::float8)
      ORDER BY fix_time DESC
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ) due
    WHERE s.device_id = due.device_id
    RETURNING s.device_id, s.latitude, s.longitude
  `.execute(db);
  return rows.map((r) => ({ deviceId: r.device_id, latitude: r.latitude, longitude: r.longitude }));
}

/** The address found for the point a device was claimed at; the claim ends. */
export async function recordDeviceAddress(db: Db, device: DeviceToAddress, address: string): Promise<void> {
  await sql`
    UPDATE device_states SET address = ${address}, address_latitude = ${device.latitude}::float8, address_longitude = ${device.longitude}::float8,
      address_at = now(), address_due_at = NULL
    WHERE device_id = ${device.deviceId}
  `.execute(db);
}

/**
 * No address for where the device went: the old one, farther than the reuse distance, no longer
 * describes it, so it goes; the device is tried again after `retryMs`.
 */
export async function recordDeviceAddressMissing(db: Db, deviceId: number, retryMs: number): Promise<void> {
  await sql`
    UPDATE device_states SET address = NULL, address_latitude = NULL, address_longitude = NULL, address_at = now(),
      address_due_at = now() + ${retryMs}::float8 * interval '1 millisecond'
    WHERE device_id = ${deviceId}
  `.execute(db);
}

/** Ends claims this process will not finish (it is stopping), so another takes them at once. */
export async function releaseDeviceClaims(db: Db, deviceIds: number[]): Promise<void> {
  if (deviceIds.length === 0) return;
  await sql`UPDATE device_states SET address_due_at = NULL WHERE device_id = ANY(${deviceIds}::int[]) AND address_due_at > now()`.execute(db);
}

/** A point of a trip or stop that has no address yet, with the device's known address to reuse if it is near. */
export interface PlaceToAddress {
  latitude: number;
  longitude: number;
}

export interface TripToAddress {
  id: number;
  /** Null: the start has its address already. */
  start: PlaceToAddress | null;
  /** Null: the end has its address already, or the trip is still in progress. */
  end: PlaceToAddress | null;
  known: KnownAddress | null;
}

export interface StopToAddress {
  id: number;
  place: PlaceToAddress;
  known: KnownAddress | null;
}

/** How far back trips and stops still missing an address are looked at: what is older stays without one. */
const RECENT = sql`interval '2 days'`;

const knownAddress = (r: { address: string | null; address_latitude: number | null; address_longitude: number | null }): KnownAddress | null =>
  r.address === null || r.address_latitude === null || r.address_longitude === null ? null : { address: r.address, latitude: r.address_latitude, longitude: r.address_longitude };

/** Claims up to `limit` recent trips whose start, or whose end once ended, has no address, newest first. */
export async function claimTripsToAddress(db: Db, limit: number, leaseMs: number): Promise<TripToAddress[]> {
  const { rows } = await sql<{
    id: number; start_lat: number; start_lng: number; end_lat: number; end_lng: number; need_start: boolean; need_end: boolean;
    address: string | null; address_latitude: number | null; address_longitude: number | null;
  }>`
    UPDATE trips t SET address_due_at = now() + ${leaseMs}::float8 * interval '1 millisecond'
    FROM (
      SELECT id FROM trips
      WHERE (start_address IS NULL OR end_address IS NULL) AND start_time > now() - ${RECENT}
        AND (start_address IS NULL OR end_time IS NOT NULL)
        AND (address_due_at IS NULL OR address_due_at <= now())
      ORDER BY start_time DESC
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ) due, device_states s
    WHERE t.id = due.id AND s.device_id = t.device_id
    RETURNING t.id, t.start_lat, t.start_lng, t.end_lat, t.end_lng, t.start_address IS NULL AS need_start,
      (t.end_time IS NOT NULL AND t.end_address IS NULL) AS need_end, s.address, s.address_latitude, s.address_longitude
  `.execute(db);
  return rows.map((r) => ({
    id: Number(r.id),
    start: r.need_start ? { latitude: r.start_lat, longitude: r.start_lng } : null,
    end: r.need_end ? { latitude: r.end_lat, longitude: r.end_lng } : null,
    known: knownAddress(r),
  }));
}

/**
 * The addresses found for a claimed trip (null: not asked, or none found); the claim ends, or with
 * a point left without one, it is tried again after `retryMs`.
 */
export async function recordTripAddresses(db: Db, id: number, found: { start: string | null; end: string | null }, missing: boolean, retryMs: number): Promise<void> {
  await sql`
    UPDATE trips SET start_address = coalesce(start_address, ${found.start}::text), end_address = coalesce(end_address, ${found.end}::text),
      address_due_at = ${missing ? sql`now() + ${retryMs}::float8 * interval '1 millisecond'` : sql`NULL`}
    WHERE id = ${id}
  `.execute(db);
}

/** Claims up to `limit` recent stops without an address, newest first. */
export async function claimStopsToAddress(db: Db, limit: number, leaseMs: number): Promise<StopToAddress[]> {
  const { rows } = await sql<{ id: number; lat: number; lng: number; address: string | null; address_latitude: number | null; address_longitude: number | null }>`
    UPDATE stops t SET address_due_at = now() + ${leaseMs}::float8 * interval '1 millisecond'
    FROM (
      SELECT id FROM stops
      WHERE address IS NULL AND start_time > now() - ${RECENT}
        AND (address_due_at IS NULL OR address_due_at <= now())
      ORDER BY start_time DESC
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ) due, device_states s
    WHERE t.id = due.id AND s.device_id = t.device_id
    RETURNING t.id, t.lat, t.lng, s.address, s.address_latitude, s.address_longitude
  `.execute(db);
  return rows.map((r) => ({ id: Number(r.id), place: { latitude: r.lat, longitude: r.lng }, known: knownAddress(r) }));
}

/** The address found for a claimed stop; null: none, tried again after `retryMs`. */
export async function recordStopAddress(db: Db, id: number, address: string | null, retryMs: number): Promise<void> {
  await sql`
    UPDATE stops SET address = ${address}::text,
      address_due_at = ${address === null ? sql`now() + ${retryMs}::float8 * interval '1 millisecond'` : sql`NULL`}
    WHERE id = ${id}
  `.execute(db);
}

/** Ends trip and stop claims this process will not finish. */
export async function releasePlaceClaims(db: Db, tripIds: number[], stopIds: number[]): Promise<void> {
  if (tripIds.length > 0) await sql`UPDATE trips SET address_due_at = NULL WHERE id = ANY(${tripIds}::bigint[]) AND address_due_at > now()`.execute(db);
  if (stopIds.length > 0) await sql`UPDATE stops SET address_due_at = NULL WHERE id = ANY(${stopIds}::bigint[]) AND address_due_at > now()`.execute(db);
}
