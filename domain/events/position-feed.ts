import { roundCoordinate, roundHeading, roundKm, roundMetres, roundSpeedKmh, roundVolts } from '../display-precision.ts';
import type { StoredFix } from '../stored-rows.ts';
import type { EventPayload } from './event-payloads.ts';

/**
 * The `vehicle.position` feed: every stored fix, handed from ingest's commits to the streams and
 * webhooks that asked for it by name, never written to the event log (decision 0022). This module is
 * the pure part: the fix as it travels between processes, the message built from it, the order, and
 * the bounded queue a slow receiver fills.
 */

/** A committed fix as the feed carries it (JSON across processes: times in ms). */
export interface FeedFix {
  deviceId: number;
  fixTime: number;
  receivedAt: number;
  latitude: number;
  longitude: number;
  speedKmh: number | null;
  heading: number | null;
  altitude: number | null;
  satellites: number | null;
  valid: boolean;
  ignition: boolean | null;
  motion: boolean | null;
  odometerKm: number | null;
  powerVoltage: number | null;
}

/** Who a position is about, as every vehicle event names it. */
export interface FeedVehicle {
  id: string;
  name: string;
  plates: string;
  imei: string;
}

/** Carries committed fixes from ingest to whoever listens: in this process, or through Redis to every process. */
export interface PositionFeed {
  /** False while publishing would reach nobody: the committer need not even build the batch. */
  wanted(): boolean;
  publish(fixes: readonly FeedFix[]): void;
  /** Returns the unsubscribe. */
  subscribe(listener: (fixes: readonly FeedFix[]) => void): () => void;
}

/** Where a process's committed fixes go: its `vehicle.position` webhooks and the feed to every stream. */
export interface PositionTakers {
  webhooks: { readonly wanted: boolean; accept(fixes: readonly FeedFix[]): void };
  feed: PositionFeed;
}

/**
 * Hands a committed batch to the webhooks and the feed; while neither takes positions (most of the
 * time: no stream and no webhook names them), the batch is not even converted.
 */
export function publishCommittedFixes(takers: PositionTakers, fixes: readonly StoredFix[]): void {
  if (!takers.webhooks.wanted && !takers.feed.wanted()) return;
  const feed = fixes.map(feedFix);
  takers.webhooks.accept(feed);
  takers.feed.publish(feed);
}

export function feedFix(f: StoredFix): FeedFix {
  return {
    deviceId: f.deviceId, fixTime: f.fixTime.getTime(), receivedAt: f.receivedAt.getTime(), latitude: f.latitude, longitude: f.longitude,
    speedKmh: f.speedKmh ?? null, heading: f.heading ?? null, altitude: f.altitude ?? null, satellites: f.satellites ?? null, valid: f.valid,
    ignition: f.ignition ?? null, motion: f.motion ?? null, odometerKm: f.odometerKm ?? null, powerVoltage: f.powerVoltage ?? null,
  };
}

/**
 * A batch as it is delivered: in fix-time order (a tracker's frame may carry its records in any
 * order), so each vehicle's positions are in fix-time order within it. Stable, so equal times keep
 * their commit order.
 */
export function inFixTimeOrder(fixes: readonly FeedFix[]): FeedFix[] {
  return [...fixes].sort((a, b) => a.fixTime - b.fixTime);
}

/**
 * One position as the stream sends it and a webhook's batch lists it. `id` names the fix (a vehicle
 * has one fix per fix time), so a receiver that sees one twice can tell; it is not an event log id.
 * Numbers rounded as the API answers them (domain/display-precision.ts).
 */
export function positionMessage(vehicle: FeedVehicle, f: FeedFix): EventPayload {
  const fixTime = new Date(f.fixTime).toISOString();
  return {
    id: `pos_${vehicle.imei}_${f.fixTime}`,
    type: 'vehicle.position',
    timestamp: fixTime,
    data: {
      vehicle,
      position: {
        lat: roundCoordinate(f.latitude), lng: roundCoordinate(f.longitude), speedKmh: roundSpeedKmh(f.speedKmh), heading: roundHeading(f.heading),
        fixTime, altitude: roundMetres(f.altitude), satellites: f.satellites, valid: f.valid, ignition: f.ignition, motion: f.motion,
        odometerKm: roundKm(f.odometerKm), powerVoltage: roundVolts(f.powerVoltage), receivedAt: new Date(f.receivedAt).toISOString(),
      },
    },
  };
}

/** A webhook request's body: many positions under one signature. */
export function positionBatchBody(id: string, sentAt: Date, messages: readonly EventPayload[]): string {
  return JSON.stringify({ id, type: 'vehicle.position', timestamp: sentAt.toISOString(), data: { events: messages } });
}

/**
 * A first-in, first-out queue with a bound: past `max` items the oldest are dropped (and counted), so a
 * receiver that is slow or down costs a fixed amount of memory, and what it gets when it recovers is
 * the newest positions.
 */
export class BoundedQueue<T> {
  private items: T[] = [];
  private head = 0;
  dropped = 0;

  constructor(readonly max: number) {}

  get length(): number {
    return this.items.length - this.head;
  }

  push(items: readonly T[]): void {
    for (const item of items) this.items.push(item);
    const over = this.length - this.max;
    if (over > 0) {
      this.head += over;
      this.dropped += over;
    }
    this.compact();
  }

  /** Takes up to `n` from the front. */
  take(n: number): T[] {
    const taken = this.items.slice(this.head, this.head + n);
    this.head += taken.length;
    this.compact();
    return taken;
  }

  clear(): void {
    this.dropped += this.length;
    this.items = [];
    this.head = 0;
  }

  /** Cuts the consumed front off once it is most of the array, so taking stays cheap without copying each time. */
  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
