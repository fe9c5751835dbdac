import { LATENCY_BUCKETS_S, metricsRegistry, prom } from '../runtime/metrics.ts';
import type { IngestCounters } from './ingest-counters.ts';

const registers = [metricsRegistry];

/** What the tracker side did, per protocol: the figures an operator watches to see trackers arrive and data land. */
export const ingestMetrics = {
  connections: new prom.Gauge({
    name: 'fleetcore_tracker_connections', help: 'Tracker connections open now', labelNames: ['protocol'], registers,
  }),
  connectionsOpened: new prom.Counter({
    name: 'fleetcore_tracker_connections_opened_total', help: 'Tracker connections accepted', labelNames: ['protocol'], registers,
  }),
  frames: new prom.Counter({
    name: 'fleetcore_frames_decoded_total', help: 'Tracker frames decoded', labelNames: ['protocol'], registers,
  }),
  malformedFrames: new prom.Counter({
    name: 'fleetcore_malformed_frames_total', help: 'Frames that could not be decoded or cut from the stream (their connection is closed)', labelNames: ['protocol'], registers,
  }),
  unknownDevices: new prom.Counter({
    name: 'fleetcore_unknown_devices_total', help: 'Logins refused because the IMEI is not registered', labelNames: ['protocol'], registers,
  }),
  positionsDecoded: new prom.Counter({
    name: 'fleetcore_positions_decoded_total', help: 'Positions decoded from tracker frames', labelNames: ['protocol'], registers,
  }),
  positionsStored: new prom.Counter({
    name: 'fleetcore_positions_stored_total', help: 'Positions committed to the database (and so acknowledged)', labelNames: ['protocol'], registers,
  }),
  ackLatency: new prom.Histogram({
    name: 'fleetcore_ack_latency_seconds', help: 'From a frame decoded to its acknowledgement written (the commit wait included)',
    labelNames: ['protocol'], buckets: LATENCY_BUCKETS_S, registers,
  }),
  batchRows: new prom.Histogram({
    name: 'fleetcore_group_commit_batch_rows', help: 'Rows per group-commit batch', buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000], registers,
  }),
  batchSeconds: new prom.Histogram({
    name: 'fleetcore_group_commit_seconds', help: 'Time to write and commit one group-commit batch (retries included)', buckets: LATENCY_BUCKETS_S, registers,
  }),
};

const running = new Set<IngestCounters>();
const writers = new Set<{ readonly held: { rows: number } }>();

new prom.Gauge({
  name: 'fleetcore_group_commit_waiting_rows', help: 'Rows held by the commit wait list now (waiting or being written)', registers,
  collect() {
    let rows = 0;
    for (const writer of writers) rows += writer.held.rows;
    this.set(rows);
  },
});

/** The refusals and repairs ingest counts (IngestCounters), exported as counters of this process. */
const COUNTED: Array<[keyof IngestCounters, string, string]> = [
  ['unstorablePositions', 'fleetcore_unstorable_positions_total', 'Positions whose coordinates or time no database would hold (kept as reports)'],
  ['valuesOutOfRange', 'fleetcore_values_out_of_range_total', 'Numeric fields out of range, stored as null'],
  ['deadLetters', 'fleetcore_dead_letters_total', 'Records the database refused, kept as dead letters and acknowledged'],
  ['refusedBusy', 'fleetcore_frames_refused_busy_total', 'Frames refused unacknowledged because the commit wait list was full'],
  ['failedBatches', 'fleetcore_failed_batches_total', 'Batches that failed for good (their trackers were not acknowledged)'],
  ['connectionsRefused', 'fleetcore_tracker_connections_refused_total', 'Tracker connections closed at once because a listener was full'],
  ['connectionsSuperseded', 'fleetcore_tracker_connections_superseded_total', 'Tracker connections replaced by a newer one of the same device'],
  ['loginTimeouts', 'fleetcore_tracker_login_timeouts_total', 'Tracker connections closed because they had not identified within the login timeout'],
  ['unidentifiedRefused', 'fleetcore_tracker_connections_unidentified_refused_total', 'Tracker connections closed at once because their address held its maximum of unidentified connections'],
];
for (const [field, name, help] of COUNTED) {
  new prom.Counter({
    name, help, registers,
    collect() {
      let total = 0;
      for (const counters of running) total += counters[field] as number;
      this.reset();
      this.inc(total);
    },
  });
}

/** Counts `counters` and `writer`'s wait list into the exported figures while its ingest runs. */
export function exportIngestCounters(counters: IngestCounters, writer: { readonly held: { rows: number } }): () => void {
  running.add(counters);
  writers.add(writer);
  return () => {
    running.delete(counters);
    writers.delete(writer);
  };
}
