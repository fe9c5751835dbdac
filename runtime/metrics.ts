import client from 'prom-client';

/**
 * Every metric of the process lives in prom-client's global registry: it is the one a cluster
 * worker hands to the primary when the primary aggregates (`--processes N`), and the domain modules
 * (ingest, engine, API, database pool) register theirs in it when they are first imported.
 * Names follow Prometheus conventions: `fleetcore_` prefix, `_total` counters, base units.
 */
export const metricsRegistry = client.register;

let defaultsStarted = false;

/** Node's own metrics (CPU, memory, event-loop lag, GC, handles), once per process. */
export function collectProcessMetrics(): void {
  if (defaultsStarted) return;
  defaultsStarted = true;
  client.collectDefaultMetrics({ register: metricsRegistry });
}

/** A metric whose label values vary per process: kept apart (not summed) when the cluster aggregates. */
export const processLabel = String(process.pid);

/** Buckets for latencies measured in seconds, from a millisecond to a minute. */
export const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export { client as prom };
