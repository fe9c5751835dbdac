import type { DatabaseHandle } from '../../db/database.ts';
import { startIngest, type IngestOptions, type RunningIngest } from '../../ingest/start-ingest.ts';
import { silentLogger, type Logger } from '../../runtime/logger.ts';
import { freePort } from './fleet-process.ts';

export interface TestIngest extends RunningIngest {
  /** The port of the one listener started. */
  port: number;
}

/**
 * Ingest as `fleet serve` wires it (registry, connections, group commit, dead letters, counters), with
 * one listener: a tracker protocol's, or OsmAnd's with `protocol: 'osmand'`.
 */
export async function startTestIngest(
  database: DatabaseHandle,
  options: Partial<Omit<IngestOptions, 'ports' | 'osmandPort'>> & { protocol?: string; port?: number; log?: Logger } = {},
): Promise<TestIngest> {
  const { protocol = 'teltonika', port, log = silentLogger, ...rest } = options;
  const chosen = port ?? (await freePort());
  const ingest = await startIngest(database, log, {
    host: '127.0.0.1',
    ports: protocol === 'osmand' ? {} : { [protocol]: chosen },
    osmandPort: protocol === 'osmand' ? chosen : 0,
    limits: { idleTimeoutMs: 30_000, maxBufferedBytes: 1024 * 1024 },
    batchRows: 1000,
    batchDelayMs: 5,
    onDevicesUpdated: () => undefined,
    ...rest,
  });
  return { ...ingest, port: ingest.listeners[0]!.port };
}
