/**
 * The rows ingest hands to the database and the engine reads back: a decoded fix, a fix with the
 * time it was received, and a report without a fix. Shared by every layer above, owned by none.
 */

/** One decoded fix with the telemetry that the status endpoints show. */
export interface DeviceFix {
  deviceId: number;
  fixTime: Date;
  valid: boolean;
  latitude: number;
  longitude: number;
  altitude?: number | null;
  speedKmh?: number | null;
  heading?: number | null;
  satellites?: number | null;
  ignition?: boolean | null;
  motion?: boolean | null;
  odometerKm?: number | null;
  powerVoltage?: number | null;
  backupVoltage?: number | null;
  signalStrength?: number | null;
  connectionType?: string | null;
  address?: string | null;
  driverId?: string | null;
  attributes?: Record<string, unknown>;
}

export interface StoredFix extends DeviceFix {
  receivedAt: Date;
}

/**
 * Telemetry without a fix (a heartbeat, an alarm, a battery level, a command's answer), or a position
 * that could not be stored: it moves the device's last report time, and what it carries reaches the
 * latest state and, when it carries anything, the device's reports.
 */
export interface StoredReport {
  deviceId: number;
  receivedAt: Date;
  /** The device's own time for it, when it sent one. */
  time?: Date | null;
  /** GSM signal, 0 to 31. */
  signalStrength?: number | null;
  connectionType?: string | null;
  attributes?: Record<string, unknown>;
}
