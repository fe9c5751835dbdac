import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveOverHttp } from './support/http-server.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

/**
 * Every request body is bounded before it is read, on every route that takes one: a client that
 * declares 400 MB is refused with 413 before it sends them, and one that streams a body without a
 * length is cut off at the limit, so the server's memory never holds more than the limit.
 */

let t: TestApp;
let http: { url: string; close(): Promise<void> };
let port: number;
const DECLARED = 400 * 1024 * 1024;

beforeAll(async () => {
  t = await startTestApp();
  http = await serveOverHttp(t.app);
  port = Number(new URL(http.url).port);
});
afterAll(async () => {
  await http?.close();
  await t?.close();
});

/** Sends only the head of a request that declares a huge body, and reads the status line of the answer. */
function declaredHuge(method: string, path: string): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`${method} ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${DECLARED}\r\n\r\n{"a":`);
    });
    let head = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      head += chunk;
      const match = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (match) {
        resolve({ status: Number(match[1]), ms: performance.now() - started });
        socket.destroy();
      }
    });
    socket.on('error', reject);
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`${method} ${path}: no answer within 5 s`));
    }, 5_000).unref();
  });
}

/** Streams up to `bytes` without a length (chunked) and resolves with the answer's status once it comes. */
function streamed(path: string, contentType: string, bytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers: { 'Content-Type': contentType } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      req.destroy();
    });
    req.on('error', () => undefined);
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    let sent = 0;
    const pump = () => {
      while (sent < bytes && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!req.destroyed) req.end();
    };
    pump();
    setTimeout(() => reject(new Error(`${path}: no answer`)), 30_000).unref();
  });
}

describe('request bodies', () => {
  it('declared beyond the limit are refused with 413 at once, on every route that takes a body', async () => {
    const routes = new Map<string, string>();
    for (const r of t.app.routes) {
      if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method)) continue;
      routes.set(`${r.method} ${r.path}`, r.path.replace(/:(\w+)/g, '1'));
    }
    expect([...routes.keys()]).toEqual(expect.arrayContaining(['POST /oauth/token', 'POST /oauth/revoke', 'POST /oauth/introspect', 'POST /api/v1/commands', 'PATCH /api/v1/geofences/:id']));
    const rssBefore = process.memoryUsage().rss;
    for (const [route, path] of routes) {
      const { status, ms } = await declaredHuge(route.split(' ')[0]!, path);
      expect(status, route).toBe(413);
      expect(ms, route).toBeLessThan(1_000);
    }
    // Nothing of the declared 400 MB was waited for or kept.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
  });

  it('streamed without a length past the limit are cut off with 413, the OAuth form at 16 KiB, without the server holding them', async () => {
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    expect(await streamed('/oauth/token', 'application/x-www-form-urlencoded', 96 * 1024 * 1024)).toBe(413);
    expect(await streamed('/api/v1/geofences', 'application/json', 96 * 1024 * 1024)).toBe(413);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(48 * 1024 * 1024);
  });
});
