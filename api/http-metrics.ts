import { LATENCY_BUCKETS_S, metricsRegistry, prom } from '../runtime/metrics.ts';

const registers = [metricsRegistry];

/** The HTTP side: requests by route pattern (never the raw path, whose ids would grow without end). */
export const httpMetrics = {
  requests: new prom.Counter({
    name: 'fleetcore_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status', labelNames: ['method', 'route', 'status'], registers,
  }),
  duration: new prom.Histogram({
    name: 'fleetcore_http_request_duration_seconds', help: 'Time to the response headers, by method and route pattern (a stream counts until it opens)',
    labelNames: ['method', 'route'], buckets: LATENCY_BUCKETS_S, registers,
  }),
  rateLimitRefusals: new prom.Counter({
    name: 'fleetcore_rate_limit_refusals_total',
    help: 'Requests refused with 429, by limit (detailed, overview: per key; authentication_failures: per client address)',
    labelNames: ['limit'], registers,
  }),
};
