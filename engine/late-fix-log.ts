import type { Logger } from '../runtime/logger.ts';

export interface DeviceLateFixes {
  deviceId: number;
  /** Late fixes evaluated (within the window behind the cursor). */
  evaluated: number;
  /** Late fixes too far behind the cursor: stored, counted, not evaluated. */
  ignored: number;
}

const HOUR_MS = 3_600_000;
/** Devices named in one line; the rest are counted, so a fleet-wide resend stays one short line. */
const NAMED = 20;

/**
 * Says when engine jobs meet late fixes: one line per job with its counts, at info level when it
 * holds a device not reported at info within the last hour, in debug otherwise. A tracker unloading
 * its buffer meets the engine batch after batch; the counts per device are kept in the database
 * (`device_engine_states.late_fixes`, `late_fixes_ignored`), so the log only has to say it started.
 */
export class LateFixLog {
  /** When each device was last reported at info; entries older than the interval are dropped. */
  private readonly reported = new Map<number, number>();

  constructor(
    private readonly log: Logger,
    private readonly windowMs: number,
    private readonly everyMs = HOUR_MS,
    private readonly now: () => number = Date.now,
  ) {}

  job(devices: readonly DeviceLateFixes[]): void {
    if (devices.length === 0) return;
    const now = this.now();
    const fresh = devices.filter((d) => !(now - (this.reported.get(d.deviceId) ?? Number.NEGATIVE_INFINITY) < this.everyMs));
    const fields = {
      evaluated: devices.reduce((n, d) => n + d.evaluated, 0),
      ignored: devices.reduce((n, d) => n + d.ignored, 0),
      windowS: this.windowMs / 1000,
    };
    if (fresh.length === 0) {
      this.log.debug('late fixes: stored after newer ones had been evaluated', { ...fields, devices: devices.length });
      return;
    }
    this.forgetOlderThan(now - this.everyMs);
    for (const d of fresh) this.reported.set(d.deviceId, now);
    this.log.info('late fixes: stored after newer ones had been evaluated', {
      ...fields,
      devices: fresh.slice(0, NAMED).map((d) => ({ deviceId: d.deviceId, evaluated: d.evaluated, ignored: d.ignored })),
      ...(fresh.length > NAMED ? { moreDevices: fresh.length - NAMED } : {}),
      ...(fresh.length < devices.length ? { alreadyReported: devices.length - fresh.length } : {}),
    });
  }

  private forgetOlderThan(cutoff: number): void {
    // Bounded by the devices reported within the interval.
    for (const [id, at] of this.reported) if (at <= cutoff) this.reported.delete(id);
  }
}
