import type { Logger } from '../runtime/logger.ts';
import type { DatabaseHandle } from '../db/database.ts';
import { fixBatchWriter } from '../db/fix-batch-writer.ts';
import { DeviceRegistry } from './device-registry.ts';
import { GroupCommitWriter } from './group-commit.ts';
import { TRACKER_PROTOCOLS } from './protocol-catalog.ts';
import type { ConnectionLimits } from './tracker-connection.ts';
import { listenForOsmAnd } from './osmand-server.ts';
import { listenForTrackers, type TrackerListener } from './tracker-listener.ts';

export interface IngestOptions {
  host: string;
  ports: Record<string, number>;
  /** OsmAnd over HTTP; 0 disables it. */
  osmandPort: number;
  limits: ConnectionLimits;
  batchRows: number;
  batchDelayMs: number;
  /** Told once per committed batch which devices got new positions (never once per position). */
  onDevicesUpdated(deviceIds: number[]): void;
}

export interface RunningIngest {
  listeners: TrackerListener[];
  registry: DeviceRegistry;
  close(): Promise<void>;
}

/** The tracker side of the server: one listener per enabled protocol over one shared group-commit writer. */
export async function startIngest(database: DatabaseHandle, log: Logger, options: IngestOptions): Promise<RunningIngest> {
  const registry = new DeviceRegistry(database.db, log);
  const writer = new GroupCommitWriter(fixBatchWriter(database), options.onDevicesUpdated, {
    maxBatch: options.batchRows,
    maxDelayMs: options.batchDelayMs,
    maxInFlight: 2,
    onRetry: (error, attempt) => {
      // One line when an outage starts, then one a minute or so while it lasts.
      if (attempt === 1 || attempt % 30 === 0) log.warn('cannot store positions; retrying, trackers wait for their ACK', { attempt, error: error.message });
    },
  });
  const listeners: TrackerListener[] = [];
  try {
    for (const { protocol } of TRACKER_PROTOCOLS) {
      const port = options.ports[protocol.name] ?? 0;
      if (port === 0) continue;
      listeners.push(await listenForTrackers(options.host, port, { protocol, registry, writer, log, limits: options.limits }));
    }
    if (options.osmandPort !== 0) listeners.push(await listenForOsmAnd(options.host, options.osmandPort, { registry, writer, log }));
  } catch (error) {
    await Promise.all(listeners.map((l) => l.close()));
    throw error;
  }
  return {
    listeners,
    registry,
    async close() {
      await Promise.all(listeners.map((l) => l.close()));
      await writer.drain();
    },
  };
}
