export type DeviceStatus = 'Moving' | 'Stopped' | 'Off' | 'Inactive';

export interface DeviceStatusThresholds {
  /** No report for longer than this makes a device Inactive. */
  inactiveAfterMinutes: number;
  /** At or above this speed a reporting device is Moving. */
  movingSpeedKmh: number;
}

export interface StatusInputs {
  lastReportAt: Date | null;
  speedKmh: number | null;
  ignition: boolean | null;
}

/**
 * Moving: fresh report at or above the moving speed. Stopped: fresh report, slower, ignition on.
 * Off: fresh report, slower, ignition off or unknown. Inactive: no report within the threshold, or never.
 */
export function classifyDeviceStatus(inputs: StatusInputs, now: Date, thresholds: DeviceStatusThresholds): DeviceStatus {
  if (!inputs.lastReportAt) return 'Inactive';
  if (now.getTime() - inputs.lastReportAt.getTime() > thresholds.inactiveAfterMinutes * 60_000) return 'Inactive';
  if ((inputs.speedKmh ?? 0) >= thresholds.movingSpeedKmh) return 'Moving';
  return inputs.ignition ? 'Stopped' : 'Off';
}
