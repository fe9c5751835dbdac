import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import type { Server } from 'node:http';
import { metricsRoutes } from '../../api/routes/metrics.ts';
import type { MetricsText } from '../../runtime/cluster-metrics.ts';
import { listenAndStayUp } from '../../runtime/listening-server.ts';
import type { Logger } from '../../runtime/logger.ts';

/** METRICS_PORT: GET /metrics on a port of its own, for a scraper on an internal network. */
export async function startMetricsServer(
  options: { host: string; port: number; token?: string },
  log: Logger,
  scrape?: () => Promise<MetricsText>,
): Promise<{ port: number; stop(): Promise<void> }> {
  const app = new Hono();
  app.route('/', metricsRoutes(log, { scrape, token: options.token }));
  app.notFound((c) => c.text('GET /metrics\n', 404));
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  server.requestTimeout = 30_000;
  const port = await listenAndStayUp(server, { host: options.host, port: options.port, name: 'metrics', portVariable: 'METRICS_PORT', maxConnections: 64, log });
  log.info('metrics listening', { url: `http://${options.host}:${port}/metrics` });
  return {
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
