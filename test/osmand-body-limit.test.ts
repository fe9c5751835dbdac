import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestIngest, type TestIngest } from './support/ingest-server.ts';
import { openTestDatabase, type TestDatabase } from './support/test-database.ts';

/**
 * The OsmAnd listener and request bodies it will not read, over a real socket: the client keeps
 * sending body bytes as fast as the server takes them, and what counts is how much the server took
 * before it answered and closed the connection. Without a bound it reads on (tens of MB, or until the
 * request timeout), with one it stops at the kernel's socket buffers.
 */

let database: TestDatabase;
let listener: TestIngest;

beforeAll(async () => {
  database = await openTestDatabase();
  listener = await startTestIngest(database, { protocol: 'osmand' });
});
afterAll(async () => {
  await listener?.close();
  await database?.destroy();
});

/** What the server took of an endless body, its answer's status line, and whether it hung up. */
interface Outcome {
  status: string;
  bytesSent: number;
  closed: boolean;
}

const MAX_SEND = 192 * 1024 * 1024;

/**
 * Sends `head`, then body bytes (chunked when `chunked`) until the server closes the connection,
 * MAX_SEND bytes went, or `timeoutMs` passed.
 */
async function pushBody(port: number, head: string, chunked: boolean, timeoutMs = 10_000): Promise<Outcome> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  let answer = '';
  let closed = false;
  socket.on('data', (data: Buffer) => (answer += data.toString('latin1')));
  socket.on('close', () => (closed = true));
  const payload = Buffer.alloc(64 * 1024, 'a');
  const chunk = chunked ? Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`), payload, Buffer.from('\r\n')]) : payload;
  let bytesSent = 0;
  const deadline = Date.now() + timeoutMs;
  socket.write(head);
  while (!closed && bytesSent < MAX_SEND && Date.now() < deadline) {
    bytesSent += chunk.length;
    if (!socket.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          socket.off('drain', done);
          socket.off('close', done);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
        socket.on('drain', done);
        socket.on('close', done);
      });
    }
  }
  // What is still queued on our side never reached the server.
  bytesSent -= socket.writableLength;
  for (let until = Date.now() + 2_000; !closed && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
  socket.destroy();
  return { status: answer.split('\r\n')[0] ?? '', bytesSent, closed };
}

describe('OsmAnd request bodies', () => {
  it('refuses a huge declared Content-Length with 413 at once and closes without reading the body', async () => {
    const started = Date.now();
    const out = await pushBody(listener.port, [
      'POST / HTTP/1.1', 'Host: x', 'Content-Type: application/x-www-form-urlencoded', `Content-Length: ${1024 ** 4}`, '', '',
    ].join('\r\n'), false);
    expect(out.status).toBe('HTTP/1.1 413 Payload Too Large');
    expect(out.closed).toBe(true);
    // The kernel's buffers hold a few MB; reading the body would take far more.
    expect(out.bytesSent).toBeLessThan(24 * 1024 * 1024);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('cuts off a chunked body at the limit: 413, and the connection closes', async () => {
    const out = await pushBody(listener.port, [
      'POST / HTTP/1.1', 'Host: x', 'Content-Type: application/x-www-form-urlencoded', 'Transfer-Encoding: chunked', '', '',
    ].join('\r\n'), true);
    expect(out.status).toBe('HTTP/1.1 413 Payload Too Large');
    expect(out.closed).toBe(true);
    expect(out.bytesSent).toBeLessThan(24 * 1024 * 1024);
  });

  it('refuses a large body announced with Expect: 100-continue without inviting it', async () => {
    const out = await pushBody(listener.port, [
      'POST / HTTP/1.1', 'Host: x', 'Expect: 100-continue', `Content-Length: ${1024 ** 3}`, '', '',
    ].join('\r\n'), false);
    expect(out.status).toBe('HTTP/1.1 413 Payload Too Large');
    expect(out.closed).toBe(true);
  });

  it.each([
    ['a declared Content-Length', `Content-Length: ${1024 ** 4}`, false],
    ['a chunked body', 'Transfer-Encoding: chunked', true],
  ])('does not read on %s sent with a GET: it is answered and the connection closes', async (_, header, chunked) => {
    const out = await pushBody(listener.port, ['GET /?id=nobody&lat=1&lon=2 HTTP/1.1', 'Host: x', header, '', ''].join('\r\n'), chunked);
    expect(out.status).toMatch(/^HTTP\/1\.1 (404|413) /);
    expect(out.closed).toBe(true);
    expect(out.bytesSent).toBeLessThan(24 * 1024 * 1024);
  });

  it('still reads a form POST within the limit', async () => {
    const body = 'id=nobody&lat=1&lon=2';
    const response = await fetch(`http://127.0.0.1:${listener.port}/`, {
      method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body,
    });
    expect(response.status).toBe(404);
  });
});
