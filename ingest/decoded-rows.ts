import type { StoredFix, StoredReport } from '../domain/stored-rows.ts';
import type { RegisteredDevice } from './device-registry.ts';
import type { IngestCounters } from './ingest-counters.ts';
import type { DecodedFrame } from './protocol.ts';
import { storedFix, storedReport, unstorableReason } from './stored-fix.ts';
import type { ThrottledNotice } from './throttled-notice.ts';

/**
 * Decoded positions and reports as rows, for every protocol (TCP or OsmAnd). A position no database
 * would hold (coordinates or time out of range) is not thrown away silently: it is counted, logged
 * once per device per hour with the reason, and still counts as a report (the device is alive).
 * Fields out of their range become null, counted and logged likewise.
 */
export function decodedRows(
  decoded: Pick<DecodedFrame, 'positions' | 'reports'>,
  device: RegisteredDevice,
  protocol: string,
  deps: { counters: IngestCounters; notice: ThrottledNotice },
): { fixes: StoredFix[]; reports: StoredReport[] } {
  const receivedAt = new Date();
  const { counters, notice } = deps;
  const outOfRange = (field: string) => {
    counters.valuesOutOfRange++;
    notice.warn(`range:${device.id}:${field}`, 'value out of range stored as null', { imei: device.imei, protocol, field });
  };
  const fixes: StoredFix[] = [];
  const reports: StoredReport[] = [];
  for (const p of decoded.positions) {
    const reason = unstorableReason(p);
    if (reason === undefined) {
      fixes.push(storedFix(device.id, p, receivedAt, outOfRange));
      continue;
    }
    counters.unstorablePositions++;
    notice.warn(`unstorable:${device.id}`, 'position not stored: out of range', { imei: device.imei, protocol, reason });
    reports.push({ deviceId: device.id, receivedAt });
  }
  for (const r of decoded.reports ?? []) reports.push(storedReport(device.id, r, receivedAt));
  return { fixes, reports };
}
