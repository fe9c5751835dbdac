import type { Db } from '../db/database.ts';
import { findDeviceByImei } from '../db/devices.ts';
import type { IngestCounters } from './ingest-counters.ts';
import type { ThrottledNotice } from './throttled-notice.ts';
import { ingestMetrics } from './ingest-metrics.ts';

export interface RegisteredDevice {
  id: number;
  imei: string;
}

const KNOWN_TTL_MS = 60_000;
// Short, so a device added with `fleet device add` can connect within seconds.
const UNKNOWN_TTL_MS = 5_000;

/** IMEI → device, cached; counts and logs (once per IMEI per hour) trackers that are not registered. */
export class DeviceRegistry {
  private readonly cache = new Map<string, { device: RegisteredDevice | undefined; until: number }>();

  constructor(
    private readonly db: Db,
    private readonly counters: IngestCounters,
    private readonly notice: ThrottledNotice,
  ) {}

  async find(imei: string): Promise<RegisteredDevice | undefined> {
    const now = Date.now();
    const hit = this.cache.get(imei);
    if (hit && hit.until > now) return hit.device;
    const row = await findDeviceByImei(this.db, imei);
    if (this.cache.size > 200_000) this.cache.clear();
    this.cache.set(imei, { device: row, until: now + (row ? KNOWN_TTL_MS : UNKNOWN_TTL_MS) });
    return row;
  }

  /** Notes a refused tracker; logs it unless this IMEI was logged within the hour. */
  refused(imei: string, protocol: string, remote: string | undefined): void {
    this.counters.unknownDevices++;
    ingestMetrics.unknownDevices.inc({ protocol });
    this.notice.warn(`unknown:${imei}`, 'unknown device refused', { imei, protocol, remote });
  }
}
