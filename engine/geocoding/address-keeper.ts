import type { Db } from '../../db/database.ts';
import {
  claimDevicesToAddress, claimStopsToAddress, claimTripsToAddress, recordDeviceAddress, recordDeviceAddressMissing,
  recordStopAddress, recordTripAddresses, releaseDeviceClaims, releasePlaceClaims, type PlaceToAddress,
} from '../../db/addresses.ts';
import { addressReusable, type KnownAddress } from '../../domain/geocoding/address-reuse.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { ReverseGeocoder } from './reverse-geocoder.ts';

export interface AddressKeeperSettings {
  /** A vehicle that moved less than this from where its address was looked up keeps it (GEOCODER_REUSE_DISTANCE_M). */
  reuseM: number;
  /** How often the database is asked what needs an address (default 1 s). */
  pollMs?: number;
  /** Lookups in flight at once from this process (default 4); the geocoder's own rate limit still applies. */
  concurrency?: number;
  /** A point left without an address is tried again after this (default 60 s). */
  retryMs?: number;
}

export interface AddressKeeper {
  close(): Promise<void>;
}

/** Rows claimed per round and kind; a claim lasts long enough for a round at a slow provider's pace. */
const BATCH = 20;
const LEASE_MS = 120_000;

/**
 * Keeps addresses after the commit, apart from the engine's jobs: a loop of its own claims what needs
 * an address (devices that moved beyond the reuse distance, recent trips and stops without one),
 * looks each up with no lock or transaction held, and writes it back. A slow or hung provider only
 * delays addresses; ingest and evaluation never wait for it. Each engine process runs one; their
 * claims skip each other's rows.
 */
export function startAddressKeeper(db: Db, geocoder: ReverseGeocoder, log: Logger, settings: AddressKeeperSettings): AddressKeeper {
  const pollMs = settings.pollMs ?? 1_000;
  const retryMs = settings.retryMs ?? 60_000;
  const lookups = new LookupSlots(settings.concurrency ?? 4);
  const claimedDevices = new Set<number>();
  const claimedTrips = new Set<number>();
  const claimedStops = new Set<number>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let failing = false;

  /** The address of a place: the device's known one when near enough, else a lookup. */
  const addressOf = (place: PlaceToAddress, known: KnownAddress | null): Promise<string | null> =>
    addressReusable(known, place.latitude, place.longitude, settings.reuseM)
      ? Promise.resolve(known.address)
      : lookups.run(() => geocoder.reverse(place.latitude, place.longitude));

  // Each claimed row is finished on its own, so one slow lookup holds back only its own row.
  const finish = (claimed: Set<number>, id: number, work: () => Promise<void>): void => {
    claimed.add(id);
    void work()
      .catch((error: Error) => { if (!stopped) log.warn('address not stored', { error: error.message }); })
      .finally(() => claimed.delete(id));
  };

  async function round(): Promise<void> {
    // Rows still in flight count against the batch, so a hung provider never piles up claims.
    const room = (claimed: Set<number>) => Math.max(0, BATCH - claimed.size);
    if (room(claimedDevices) > 0) {
      for (const device of await claimDevicesToAddress(db, settings.reuseM, room(claimedDevices), LEASE_MS)) {
        finish(claimedDevices, device.deviceId, async () => {
          const address = await lookups.run(() => geocoder.reverse(device.latitude, device.longitude));
          if (stopped) return;
          if (address === null) await recordDeviceAddressMissing(db, device.deviceId, retryMs);
          else await recordDeviceAddress(db, device, address);
        });
      }
    }
    if (room(claimedTrips) > 0) {
      for (const trip of await claimTripsToAddress(db, room(claimedTrips), LEASE_MS)) {
        finish(claimedTrips, trip.id, async () => {
          const [start, end] = await Promise.all([
            trip.start ? addressOf(trip.start, trip.known) : null,
            trip.end ? addressOf(trip.end, trip.known) : null,
          ]);
          if (stopped) return;
          await recordTripAddresses(db, trip.id, { start, end }, (trip.start !== null && start === null) || (trip.end !== null && end === null), retryMs);
        });
      }
    }
    if (room(claimedStops) > 0) {
      for (const stop of await claimStopsToAddress(db, room(claimedStops), LEASE_MS)) {
        finish(claimedStops, stop.id, async () => {
          const address = await addressOf(stop.place, stop.known);
          if (!stopped) await recordStopAddress(db, stop.id, address, retryMs);
        });
      }
    }
  }

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      round()
        .then(() => { if (failing) log.info('addresses kept again'); failing = false; })
        .catch((error: Error) => {
          // Said once until it recovers: a database outage would otherwise log every second.
          if (!failing && !stopped) log.warn('addresses not kept', { error: error.message });
          failing = true;
        })
        .finally(schedule);
    }, pollMs);
    timer.unref();
  };
  schedule();

  return {
    async close() {
      stopped = true;
      clearTimeout(timer);
      // Lookups still in flight are abandoned: their rows go back to be claimed at once, here or elsewhere.
      await releaseDeviceClaims(db, [...claimedDevices]).catch(() => {});
      await releasePlaceClaims(db, [...claimedTrips], [...claimedStops]).catch(() => {});
    },
  };
}

/** At most `size` lookups at once; the rest wait their turn in order. */
class LookupSlots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  async run<T>(lookup: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running += 1;
    try {
      return await lookup();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
