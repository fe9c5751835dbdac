import { randomUUID } from 'node:crypto';
import { createMiddleware } from 'hono/factory';
import { routePath } from 'hono/route';
import type { Logger } from '../runtime/logger.ts';
import { clientAddress } from './client-address.ts';
import { httpMetrics } from './http-metrics.ts';

/** A caller's own id is kept when it is a sensible token; anything else is replaced, never echoed. */
const ACCEPTED_REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * First on every request (after the client's address is resolved): its id (the caller's `x-request-id`, or a new UUID), returned in the
 * response's `x-request-id`; a logger whose every line carries it; then, once answered, one access
 * line and the request metrics. The path is logged without its query string, which may hold a
 * stream token.
 */
export function requestContext(log: Logger) {
  return createMiddleware<{ Variables: { requestId: string; log: Logger } }>(async (c, next) => {
    const offered = c.req.header(REQUEST_ID_HEADER);
    const requestId = offered && ACCEPTED_REQUEST_ID.test(offered) ? offered : randomUUID();
    const requestLog = log.child({ requestId });
    c.set('requestId', requestId);
    c.set('log', requestLog);
    const started = performance.now();
    await next();
    const seconds = (performance.now() - started) / 1000;
    c.res.headers.set(REQUEST_ID_HEADER, requestId);
    const route = routePath(c, -1);
    const status = c.res.status;
    httpMetrics.requests.inc({ method: c.req.method, route, status: String(status) });
    httpMetrics.duration.observe({ method: c.req.method, route }, seconds);
    requestLog.info('http request', { method: c.req.method, path: c.req.path, route, status, ms: Math.round(seconds * 10_000) / 10, address: clientAddress(c) });
  });
}
