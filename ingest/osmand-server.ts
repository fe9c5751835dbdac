import { getRequestListener } from '@hono/node-server';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { listenAndStayUp } from '../runtime/listening-server.ts';
import type { Logger } from '../runtime/logger.ts';
import type { DeviceRegistry } from './device-registry.ts';
import type { GroupCommitWriter } from './group-commit.ts';
import type { IngestCounters } from './ingest-counters.ts';
import { MalformedFrameError } from './malformed-frame-error.ts';
import { decodeOsmAnd } from './protocols/osmand/osmand-decoder.ts';
import { StoreFailedError } from './store-failed-error.ts';
import { decodedRows } from './decoded-rows.ts';
import { unstorableReason } from './stored-fix.ts';
import type { ThrottledNotice } from './throttled-notice.ts';
import type { TrackerListener } from './tracker-listener.ts';
import { WaitListFullError } from './wait-list-full-error.ts';
import { ingestMetrics } from './ingest-metrics.ts';

const MAX_BODY_BYTES = 16 * 1024;
/** What a refused phone app is told to wait before sending again. */
const RETRY_AFTER_S = '5';

/** Parameters from the query string and, for a form POST, the body (the apps use either). */
async function parameters(request: Request): Promise<URLSearchParams> {
  const params = new URL(request.url).searchParams;
  if (request.method === 'POST' && (request.headers.get('content-type') ?? '').includes('application/x-www-form-urlencoded')) {
    for (const [name, value] of new URLSearchParams(await request.text())) params.set(name, value);
  }
  return params;
}

const OSMAND = { protocol: 'osmand' };

function tooLarge(response: ServerResponse): void {
  response.writeHead(413, { 'Content-Type': 'text/plain; charset=UTF-8', Connection: 'close' });
  response.end('request too large');
}

/**
 * Request bodies bounded before anything reads them: a declared length past the limit is answered
 * 413 at once (and a client that asked to `Expect: 100-continue` is never invited to send it), and a
 * body the app does not read, a GET's, is not read to its end after the answer either: the connection
 * closes. Chunked POST bodies are cut at the limit by bodyLimit, whose 413 closes the connection too.
 */
function boundedBodies(handle: (request: IncomingMessage, response: ServerResponse) => unknown) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > MAX_BODY_BYTES) return tooLarge(response);
    if (request.method !== 'POST' && (declared > 0 || request.headers['transfer-encoding'] !== undefined)) response.setHeader('Connection', 'close');
    void handle(request, response);
  };
}

export interface OsmAndDeps {
  registry: DeviceRegistry;
  writer: GroupCommitWriter;
  counters: IngestCounters;
  notice: ThrottledNotice;
  log: Logger;
}

/**
 * OsmAnd over HTTP: the answer (200) comes after the fix is committed, so the app keeps and resends
 * a fix it got no 200 for. Unknown devices get 404, unreadable requests 400, a fix that could not be
 * stored 503 (with Retry-After when the server is busy).
 */
export async function listenForOsmAnd(options: { host: string; port: number; maxConnections: number }, deps: OsmAndDeps): Promise<TrackerListener> {
  const { counters } = deps;
  const app = new Hono();
  app.use('*', bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => c.text('request too large', 413, { Connection: 'close' }) }));
  app.on(['GET', 'POST'], '*', async (c) => {
    const started = performance.now();
    let fix;
    try {
      fix = decodeOsmAnd(await parameters(c.req.raw));
    } catch (error) {
      if (error instanceof MalformedFrameError) {
        ingestMetrics.malformedFrames.inc(OSMAND);
        return c.text(error.message, 400);
      }
      throw error;
    }
    ingestMetrics.frames.inc(OSMAND);
    const device = await deps.registry.find(fix.deviceId);
    if (!device) {
      deps.registry.refused(fix.deviceId, 'osmand', c.req.header('x-forwarded-for'));
      return c.text('unknown device', 404);
    }
    const { fixes, reports } = decodedRows({ positions: [fix.position] }, device, 'osmand', deps);
    if (fixes.length === 0) {
      // Not a fix, but the phone is alive: its report time moves.
      await deps.writer.submit({ fixes, reports, protocol: 'osmand' }).catch(() => undefined);
      return c.text(`position out of range: ${unstorableReason(fix.position)}`, 400);
    }
    ingestMetrics.positionsDecoded.inc(OSMAND, fixes.length);
    try {
      await deps.writer.submit({ fixes, protocol: 'osmand', frame: new TextEncoder().encode(c.req.url) });
      ingestMetrics.positionsStored.inc(OSMAND, fixes.length);
      ingestMetrics.ackLatency.observe(OSMAND, (performance.now() - started) / 1000);
    } catch (error) {
      if (error instanceof WaitListFullError) {
        counters.refusedBusy++;
        return c.text('server busy; send again later', 503, { 'Retry-After': RETRY_AFTER_S });
      }
      if (error instanceof StoreFailedError) return c.text('could not store; send again', 503);
      throw error;
    }
    return c.body(null, 200);
  });
  app.onError((error, c) => {
    deps.log.error('osmand request failed', { error: error.message });
    return c.text('internal error', 500);
  });
  const request = boundedBodies(getRequestListener(app.fetch));
  const server = createServer(request);
  server.on('checkContinue', (incoming: IncomingMessage, response: ServerResponse) => {
    if (Number(incoming.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return tooLarge(response);
    response.writeContinue();
    request(incoming, response);
  });
  server.requestTimeout = 30_000;
  server.headersTimeout = 15_000;
  const port = await listenAndStayUp(server, {
    host: options.host,
    port: options.port,
    name: 'osmand',
    portVariable: 'OSMAND_PORT',
    maxConnections: options.maxConnections,
    log: deps.log,
    onDrop: () => counters.connectionsRefused++,
  });
  return {
    protocol: 'osmand',
    port,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await deps.writer.drain();
    },
  };
}
