/**
 * What ingest accepted, refused or changed, counted since start: nothing is thrown away silently.
 * Logged as one line a minute while something moves (see startIngest); the metrics issue will export
 * the same numbers.
 */
export class IngestCounters {
  /** Trackers refused because their IMEI is not registered. */
  unknownDevices = 0;
  /** Positions whose coordinates or time no database would hold; they still count as reports. */
  unstorablePositions = 0;
  /** Numeric fields out of their range (satellites past 255, a heading of 4000°…), stored as null. */
  valuesOutOfRange = 0;
  /** Records the database refused even so; kept as dead letters and acknowledged. */
  deadLetters = 0;
  /** Frames refused unacknowledged because the commit wait list was full (the trackers keep them). */
  refusedBusy = 0;
  /** Batches that failed with an error retrying cannot fix; their trackers were not acknowledged. */
  failedBatches = 0;
  /** Connections closed at once because a listener was at its maximum. */
  connectionsRefused = 0;
  /** Connections replaced by a newer connection of the same device. */
  connectionsSuperseded = 0;
  /** Connections closed because they had not identified within TRACKER_LOGIN_TIMEOUT_S. */
  loginTimeouts = 0;
  /** Connections closed at once: their address held TRACKER_MAX_UNIDENTIFIED_PER_ADDRESS unidentified ones. */
  unidentifiedRefused = 0;
  /** Pictures trackers sent that were stored (a picture sent again is counted again, stored once). */
  mediaStored = 0;
  /** Pictures not kept: too large (MEDIA_MAX_BYTES), empty, or not a JPEG or PNG. */
  mediaRefused = 0;

  snapshot(): Record<string, number> {
    return { ...(this as unknown as Record<string, number>) };
  }
}
