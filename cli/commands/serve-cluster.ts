import cluster from 'node:cluster';
import { serveClusterMetrics } from '../../runtime/cluster-metrics.ts';
import type { Logger } from '../../runtime/logger.ts';
import { startMetricsServer } from '../server/metrics-server.ts';

/**
 * `fleet serve --processes N`: N copies of the server sharing its ports through node:cluster (the
 * primary accepts connections and hands them round-robin to the workers), so ingest and the API use
 * every core. Workers that crash are started again; SIGTERM or SIGINT stops them all, each committing
 * and acknowledging its in-flight batches first. GET /metrics, on any worker or on METRICS_PORT
 * (held by the primary), shows every process's metrics.
 */
export async function runServeCluster(processes: number, log: Logger, metrics: { host: string; port: number | undefined; token?: string }): Promise<void> {
  let stopping = false;
  // Workers ask the primary for the whole cluster's metrics when scraped on the API port.
  const aggregator = serveClusterMetrics();
  if (metrics.port !== undefined) {
    await startMetricsServer({ host: metrics.host, port: metrics.port, token: metrics.token }, log, async () => ({
      contentType: aggregator.contentType, text: await aggregator.clusterMetrics(),
    }));
  }
  const fork = () => cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    log.warn('server process exited; starting another', { pid: worker.process.pid, code, signal });
    setTimeout(fork, 1_000);
  });
  for (let i = 0; i < processes; i++) fork();
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info('shutting down', { signal, processes: Object.keys(cluster.workers ?? {}).length });
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
