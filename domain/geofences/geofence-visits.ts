/** An enter or exit of one device, as the engine decides it and geofence_events stores it. */
export interface DeviceCrossing {
  deviceId: number;
  geofenceId: number;
  type: 'enter' | 'exit';
  fixTime: Date;
  latitude: number;
  longitude: number;
}

export interface Visit {
  deviceId: number;
  geofenceId: number;
  entry: Date;
  /** Null while the device is still inside. */
  exit: Date | null;
}

export interface VisitChanges {
  /** Open visits stored earlier that an exit of this batch closes. */
  close: Array<{ deviceId: number; geofenceId: number; exit: Date }>;
  /** Visits opened in this batch, closed in it or still open. */
  open: Visit[];
}

/**
 * Visits from crossings in time order: an enter opens one, an exit closes the open one (opened in
 * this batch or stored earlier). The stored ones are closed before the new ones are written, so a
 * device that leaves and comes back within one batch never holds two open visits of a geofence.
 */
export function visitChanges(crossings: readonly DeviceCrossing[]): VisitChanges {
  const opened = new Map<string, Visit>();
  const finished: Visit[] = [];
  const close: VisitChanges['close'] = [];
  for (const c of crossings) {
    const key = `${c.deviceId}:${c.geofenceId}`;
    const open = opened.get(key);
    if (c.type === 'enter') {
      if (open) finished.push(open); // two enters without an exit cannot happen; kept rather than lost
      opened.set(key, { deviceId: c.deviceId, geofenceId: c.geofenceId, entry: c.fixTime, exit: null });
    } else if (open) {
      open.exit = c.fixTime;
      finished.push(open);
      opened.delete(key);
    } else {
      close.push({ deviceId: c.deviceId, geofenceId: c.geofenceId, exit: c.fixTime });
    }
  }
  return { close, open: [...finished, ...opened.values()] };
}
