import { Hono } from 'hono';
import { scrapeMetrics, type MetricsText } from '../../runtime/cluster-metrics.ts';
import type { Logger } from '../../runtime/logger.ts';

/**
 * GET /metrics in the Prometheus text format: this process's metrics, or every process's in a
 * `--processes N` cluster. Unauthenticated, as scrapers expect: it holds counts and timings, never
 * fleet data; set METRICS_PORT to serve it on a port of its own and keep it off the public one.
 */
export function metricsRoutes(log: Logger, scrape: () => Promise<MetricsText> = scrapeMetrics) {
  const app = new Hono();
  app.get('/metrics', async (c) => {
    try {
      const { contentType, text } = await scrape();
      return c.body(text, 200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
    } catch (error) {
      log.warn('metrics scrape failed', { error: (error as Error).message });
      return c.text(`metrics unavailable: ${(error as Error).message}\n`, 503);
    }
  });
  return app;
}
