import type { DatabaseHandle } from '../db/database.ts';
import { insertDeadLetters } from '../db/dead-letters.ts';
import { fixBatchWriter } from '../db/fix-batch-writer.ts';
import { findDeviceByImei } from '../db/devices.ts';
import type { StoredFix } from '../domain/stored-rows.ts';
import type { Logger } from '../runtime/logger.ts';
import type { CommandDelivery } from './commands/command-delivery.ts';
import { DeviceConnections } from './device-connections.ts';
import { DeviceRegistry } from './device-registry.ts';
import { DEFAULT_MAX_WAITING_BYTES, DEFAULT_MAX_WAITING_ROWS, GroupCommitWriter } from './group-commit.ts';
import { defaultMaxConnections } from '../runtime/file-descriptor-limit.ts';
import { IngestCounters } from './ingest-counters.ts';
import { exportIngestCounters, ingestMetrics } from './ingest-metrics.ts';
import { listenForOsmAnd } from './osmand-server.ts';
import type { ProxyProtocolOptions } from './proxied-connection.ts';
import { PresenceLog } from './presence-log.ts';
import { TRACKER_PROTOCOLS } from './protocol-catalog.ts';
import { DEFAULT_MEDIA_MAX_BYTES } from './protocol.ts';
import { databaseMedia } from './tracker-media.ts';
import { ThrottledNotice } from './throttled-notice.ts';
import { UnidentifiedConnections } from './unidentified-connections.ts';
import type { ConnectionLimits } from './tracker-connection.ts';
import { listenForTrackers, type TrackerListener } from './tracker-listener.ts';

export interface IngestOptions {
  host: string;
  ports: Record<string, number>;
  /** OsmAnd over HTTP; 0 disables it. */
  osmandPort: number;
  limits: ConnectionLimits;
  /** Connections each listener holds at once (default: sized to the open-file limit). */
  maxConnections?: number;
  batchRows: number;
  batchDelayMs: number;
  /** Rows and estimated bytes the commit wait list holds at most (an outage's backlog). */
  maxWaitingRows?: number;
  maxWaitingBytes?: number;
  /** Told once per committed batch which devices got new positions (never once per position). */
  onDevicesUpdated(deviceIds: number[]): void;
  /** Told each committed batch's fixes (the `vehicle.position` feed); absent, nobody is. */
  onFixesCommitted?(fixes: StoredFix[]): void;
  /** How often the counters are logged while they move (default a minute). */
  countersLogIntervalMs?: number;
  /** Gives connected trackers their commands; absent, none are sent. */
  commands?: CommandDelivery;
  /** MEDIA_MAX_BYTES: the largest picture from a tracker that is kept (default 5 MiB). */
  mediaMaxBytes?: number;
  /**
   * TRACKER_PROXY_PROTOCOL: the tracker ports (not OsmAnd's HTTP port) sit behind a proxy that opens
   * every connection with a PROXY protocol header naming the tracker; absent, they take trackers directly.
   */
  proxyProtocol?: ProxyProtocolOptions;
}

export interface RunningIngest {
  listeners: TrackerListener[];
  registry: DeviceRegistry;
  counters: IngestCounters;
  writer: GroupCommitWriter;
  close(): Promise<void>;
}

/** Logs a line at most this often per SQLSTATE (or error message) for batches that failed for good. */
const FAILURE_LOG_INTERVAL_MS = 60_000;

/** The tracker side of the server: one listener per enabled protocol over one shared group-commit writer. */
export async function startIngest(database: DatabaseHandle, log: Logger, options: IngestOptions): Promise<RunningIngest> {
  const counters = new IngestCounters();
  const notice = new ThrottledNotice(log);
  const failureNotice = new ThrottledNotice(log, FAILURE_LOG_INTERVAL_MS);
  const registry = new DeviceRegistry((imei) => findDeviceByImei(database.db, imei), counters, notice);
  const connections = new DeviceConnections(() => counters.connectionsSuperseded++);
  const unidentified = new UnidentifiedConnections(options.limits.maxUnidentifiedPerAddress);
  const presence = new PresenceLog(database.db, log);
  const media = databaseMedia(database.db, options.mediaMaxBytes ?? DEFAULT_MEDIA_MAX_BYTES);
  const writer = new GroupCommitWriter(
    fixBatchWriter(database),
    (letters) => insertDeadLetters(database.db, letters),
    {
      committed: options.onDevicesUpdated,
      fixesCommitted: options.onFixesCommitted,
      retrying: (error, attempt) => {
        // One line when an outage starts, then one a minute or so while it lasts.
        if (attempt === 1 || attempt % 30 === 0) log.warn('cannot store positions; retrying, trackers wait for their ACK', { attempt, error: error.message });
      },
      failed: (error, rows) => {
        counters.failedBatches++;
        failureNotice.warn(`failed:${error.sqlstate ?? error.message}`, 'positions not stored and not acknowledged; trackers will resend once this is fixed', {
          sqlstate: error.sqlstate, rows, error: error.message,
        });
      },
      deadLettered: (count) => {
        counters.deadLetters += count;
        log.warn('records the database refused kept as dead letters and acknowledged (fleet dead-letter list)', { count });
      },
      batchSettled: (rows, seconds) => {
        ingestMetrics.batchRows.observe(rows);
        ingestMetrics.batchSeconds.observe(seconds);
      },
    },
    {
      maxBatch: options.batchRows,
      maxDelayMs: options.batchDelayMs,
      maxInFlight: 2,
      maxWaitingRows: options.maxWaitingRows ?? DEFAULT_MAX_WAITING_ROWS,
      maxWaitingBytes: options.maxWaitingBytes ?? DEFAULT_MAX_WAITING_BYTES,
    },
  );
  const unexport = exportIngestCounters(counters, writer);
  const maxConnections = options.maxConnections ?? defaultMaxConnections();
  const listeners: TrackerListener[] = [];
  try {
    for (const { protocol, portVariable } of TRACKER_PROTOCOLS) {
      const port = options.ports[protocol.name] ?? 0;
      if (port === 0) continue;
      listeners.push(
        await listenForTrackers(
          { host: options.host, port, portVariable, maxConnections, proxyProtocol: options.proxyProtocol },
          { protocol, registry, connections, writer, presence, counters, notice, log, limits: options.limits, unidentified, commands: options.commands, media },
        ),
      );
    }
    if (options.osmandPort !== 0) {
      listeners.push(
        await listenForOsmAnd({ host: options.host, port: options.osmandPort, maxConnections }, { registry, writer, counters, notice, log }),
      );
    }
  } catch (error) {
    unexport();
    presence.shutdown();
    await Promise.all(listeners.map((l) => l.close()));
    await presence.close();
    throw error;
  }

  let logged = JSON.stringify(counters.snapshot());
  const countersLog = setInterval(() => {
    const now = JSON.stringify(counters.snapshot());
    if (now === logged) return;
    logged = now;
    log.info('ingest counters since start', { ...counters.snapshot(), connections: connections.size, waitingRows: writer.held.rows });
  }, options.countersLogIntervalMs ?? 60_000);
  countersLog.unref();

  return {
    listeners,
    registry,
    counters,
    writer,
    async close() {
      clearInterval(countersLog);
      // Every connection the shutdown closes is logged offline for that reason, before the database goes.
      presence.shutdown();
      await Promise.all(listeners.map((l) => l.close()));
      await writer.drain();
      await presence.close();
      unexport();
    },
  };
}
