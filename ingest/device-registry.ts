import type { IngestCounters } from './ingest-counters.ts';
import type { ThrottledNotice } from './throttled-notice.ts';
import { ingestMetrics } from './ingest-metrics.ts';

export interface RegisteredDevice {
  id: number;
  imei: string;
}

/** Entries each part of the cache holds at most; past it the least recently used goes. */
export interface RegistryBounds {
  knownDevices: number;
  unknownIds: number;
}

const KNOWN_TTL_MS = 60_000;
// Short, so a device added with `fleet device add` can connect within seconds.
const UNKNOWN_TTL_MS = 5_000;
// Known devices: a large fleet reconnecting at once is answered from memory. Unknown ids: enough for
// a few seconds of strangers; a flood of made-up IMEIs only ever evicts other unknown ids.
const DEFAULT_BOUNDS: RegistryBounds = { knownDevices: 200_000, unknownIds: 50_000 };

interface Entry {
  device: RegisteredDevice | undefined;
  until: number;
}

/**
 * IMEI → device, cached; counts and logs (once per IMEI per hour) trackers that are not registered.
 * Registered devices and unknown ids are cached apart, each with its own bound and least-recently-used
 * eviction, so strangers trying random IMEIs cannot push real trackers out of the cache.
 */
export class DeviceRegistry {
  private readonly known = new Map<string, Entry>();
  private readonly unknown = new Map<string, Entry>();
  private readonly bounds: RegistryBounds;

  constructor(
    private readonly lookup: (imei: string) => Promise<RegisteredDevice | undefined>,
    private readonly counters: IngestCounters,
    private readonly notice: ThrottledNotice,
    bounds: Partial<RegistryBounds> = {},
  ) {
    this.bounds = { ...DEFAULT_BOUNDS, ...bounds };
  }

  async find(imei: string): Promise<RegisteredDevice | undefined> {
    const now = Date.now();
    const hit = this.known.get(imei) ?? this.unknown.get(imei);
    if (hit && hit.until > now) {
      touch(hit.device ? this.known : this.unknown, imei, hit);
      return hit.device;
    }
    const device = await this.lookup(imei);
    this.known.delete(imei);
    this.unknown.delete(imei);
    const entry = { device, until: Date.now() + (device ? KNOWN_TTL_MS : UNKNOWN_TTL_MS) };
    if (device) put(this.known, imei, entry, this.bounds.knownDevices);
    else put(this.unknown, imei, entry, this.bounds.unknownIds);
    return device;
  }

  /** Notes a refused tracker; logs it unless this IMEI was logged within the hour. */
  refused(imei: string, protocol: string, remote: string | undefined): void {
    this.counters.unknownDevices++;
    ingestMetrics.unknownDevices.inc({ protocol });
    this.notice.warn(`unknown:${imei}`, 'unknown device refused', { imei, protocol, remote });
  }
}

/** A Map keeps insertion order: moved to the end on use, its first key is the least recently used. */
function touch(cache: Map<string, Entry>, key: string, entry: Entry): void {
  cache.delete(key);
  cache.set(key, entry);
}

/**
 * At its bound, the least recently used sixteenth goes in one pass: deleting one key at a time from a
 * Map's front makes every later first-key look walk past the deleted slots (quadratic under a flood).
 */
function put(cache: Map<string, Entry>, key: string, entry: Entry, max: number): void {
  if (cache.size >= max) {
    let evict = Math.max(1, cache.size - max + 1, max >> 4);
    for (const old of cache.keys()) {
      cache.delete(old);
      if (--evict === 0) break;
    }
  }
  cache.set(key, entry);
}
