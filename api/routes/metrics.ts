import { createHash, timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import { scrapeMetrics, type MetricsText } from '../../runtime/cluster-metrics.ts';
import type { Logger } from '../../runtime/logger.ts';

export interface MetricsRouteOptions {
  /** Where the text comes from (default: this process, or the cluster through its primary). */
  scrape?: () => Promise<MetricsText>;
  /** METRICS_TOKEN: when set, a scrape must send `Authorization: Bearer <token>` (Prometheus: `authorization.credentials`). */
  token?: string;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * GET /metrics in the Prometheus text format: this process's metrics, or every process's in a
 * `--processes N` cluster. Open by default, as scrapers expect: it holds counts and timings, never
 * fleet data; METRICS_PORT serves it on a port of its own, off the public one, and METRICS_TOKEN asks
 * scrapers for a bearer token (compared in constant time).
 */
export function metricsRoutes(log: Logger, options: MetricsRouteOptions = {}) {
  const scrape = options.scrape ?? scrapeMetrics;
  const expected = options.token === undefined ? undefined : digest(options.token);
  const app = new Hono();
  app.get('/metrics', async (c) => {
    if (expected) {
      const presented = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('Authorization') ?? '')?.[1];
      if (!presented || !timingSafeEqual(digest(presented), expected)) {
        return c.text('metrics need the bearer token set in METRICS_TOKEN\n', 401, { 'WWW-Authenticate': 'Bearer realm="metrics"' });
      }
    }
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
