import { createAdaptorServer } from '@hono/node-server';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from '../runtime/logger.ts';
import { StartupError } from '../runtime/startup-error.ts';
import type { DeviceRegistry } from './device-registry.ts';
import type { GroupCommitWriter } from './group-commit.ts';
import { MalformedFrameError } from './malformed-frame-error.ts';
import { decodeOsmAnd } from './protocols/osmand/osmand-decoder.ts';
import { storable, storedFix } from './stored-fix.ts';
import type { TrackerListener } from './tracker-listener.ts';

const MAX_BODY_BYTES = 16 * 1024;

/** Parameters from the query string and, for a form POST, the body (the apps use either). */
async function parameters(request: Request): Promise<URLSearchParams> {
  const params = new URL(request.url).searchParams;
  if (request.method === 'POST' && (request.headers.get('content-type') ?? '').includes('application/x-www-form-urlencoded')) {
    for (const [name, value] of new URLSearchParams(await request.text())) params.set(name, value);
  }
  return params;
}

/**
 * OsmAnd over HTTP: the answer (200) comes after the fix is committed, so the app keeps and resends
 * a fix it got no 200 for. Unknown devices get 404, unreadable requests 400.
 */
export async function listenForOsmAnd(
  host: string,
  port: number,
  deps: { registry: DeviceRegistry; writer: GroupCommitWriter; log: Logger },
): Promise<TrackerListener> {
  const app = new Hono();
  app.use('*', bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => c.text('request too large', 413) }));
  app.on(['GET', 'POST'], '*', async (c) => {
    let fix;
    try {
      fix = decodeOsmAnd(await parameters(c.req.raw));
    } catch (error) {
      if (error instanceof MalformedFrameError) return c.text(error.message, 400);
      throw error;
    }
    const device = await deps.registry.find(fix.deviceId);
    if (!device) {
      deps.registry.refused(fix.deviceId, 'osmand', c.req.header('x-forwarded-for'));
      return c.text('unknown device', 404);
    }
    if (!storable(fix.position)) return c.text('position out of range', 400);
    try {
      await deps.writer.submit([storedFix(device.id, fix.position, new Date())]);
    } catch {
      return c.text('could not store; send again', 503);
    }
    return c.body(null, 200);
  });
  app.onError((error, c) => {
    deps.log.error('osmand request failed', { error: error.message });
    return c.text('internal error', 500);
  });
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new StartupError(`osmand port ${port} is already in use; set OSMAND_PORT (0 disables it)`) : error),
    );
    server.listen(port, host, () => resolve());
  });
  return {
    protocol: 'osmand',
    port: (server.address() as AddressInfo).port,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await deps.writer.drain();
    },
  };
}
