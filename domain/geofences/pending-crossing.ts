/** A crossing waiting out its geofence's dwell time: what the engine decides and stores between batches. */
export interface PendingCrossing {
  geofenceId: number;
  type: 'enter' | 'exit';
  /** Fix time (ms) of the first fix of the crossing: the event's time once confirmed. */
  since: number;
  latitude: number;
  longitude: number;
}
