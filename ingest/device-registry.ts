import type { Logger } from '../runtime/logger.ts';
import type { Db } from '../db/database.ts';
import { findDeviceByImei } from '../db/devices.ts';

export interface RegisteredDevice {
  id: number;
  imei: string;
}

const KNOWN_TTL_MS = 60_000;
// Short, so a device added with `fleet device add` can connect within seconds.
const UNKNOWN_TTL_MS = 5_000;
const UNKNOWN_LOG_INTERVAL_MS = 3_600_000;

/** IMEI → device, cached; counts and logs (once per IMEI per hour) trackers that are not registered. */
export class DeviceRegistry {
  private readonly cache = new Map<string, { device: RegisteredDevice | undefined; until: number }>();
  private readonly unknownLoggedAt = new Map<string, number>();
  unknownAttempts = 0;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
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
    this.unknownAttempts++;
    const now = Date.now();
    if (now - (this.unknownLoggedAt.get(imei) ?? 0) < UNKNOWN_LOG_INTERVAL_MS) return;
    if (this.unknownLoggedAt.size > 100_000) this.unknownLoggedAt.clear();
    this.unknownLoggedAt.set(imei, now);
    this.log.warn('unknown device refused', { imei, protocol, remote });
  }
}
