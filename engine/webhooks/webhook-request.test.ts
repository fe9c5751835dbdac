import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { postWebhook } from './webhook-request.ts';

// A host only the check's resolver knows: the system resolver answers ENOTFOUND for `.invalid`, so a
// request that reached the receiver connected to the checked address and did not look the host up again.
vi.mock('node:dns/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:dns/promises')>();
  const lookup = async (host: string, options: object) => (host === 'pinned.invalid' ? [{ address: '127.0.0.1', family: 4 }] : real.lookup(host, options as never));
  return { ...real, default: { ...real, lookup }, lookup };
});

interface Seen { headers: IncomingHttpHeaders; body: string }

let server: Server;
let port: number;
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      if (req.url === '/hang') return;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const OPEN = { timeoutMs: 2_000, allowPrivate: true };

describe('postWebhook', () => {
  it('POSTs JSON with the given headers, the Host naming the URL\'s host', async () => {
    seen.length = 0;
    const answer = await postWebhook(`http://localhost:${port}/hook`, '{"a":1}', { 'webhook-id': 'msg_1' }, OPEN);
    expect(answer).toMatchObject({ status: 204, error: undefined });
    expect(seen[0]!.headers).toMatchObject({ host: `localhost:${port}`, 'content-type': 'application/json', 'webhook-id': 'msg_1' });
    expect(seen[0]!.body).toBe('{"a":1}');
  });

  it('connects to the address it checked, never resolving the host again (DNS rebinding)', async () => {
    seen.length = 0;
    const answer = await postWebhook(`http://pinned.invalid:${port}/hook`, '{}', {}, OPEN);
    expect(answer).toMatchObject({ status: 204 });
    expect(seen[0]!.headers.host).toBe(`pinned.invalid:${port}`);
  });

  it('refuses a private address before connecting unless allowed', async () => {
    seen.length = 0;
    const answer = await postWebhook(`http://pinned.invalid:${port}/hook`, '{}', {}, { timeoutMs: 2_000, allowPrivate: false });
    expect(answer.status).toBeUndefined();
    expect(answer.error).toMatch(/resolves to 127\.0\.0\.1, which webhooks may not reach/);
    expect(seen).toHaveLength(0);
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const answer = await postWebhook(`http://127.0.0.1:${port}/hang`, '{}', {}, { timeoutMs: 300, allowPrivate: true });
    expect(answer.status).toBeUndefined();
    expect(answer.error).toBe('timed out after 300 ms');
    expect(answer.durationMs).toBeGreaterThanOrEqual(290);
    expect(answer.durationMs).toBeLessThan(1_500);
  });

  it('reports a refused connection as an error, not a status', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const answer = await postWebhook(`http://127.0.0.1:${deadPort}/hook`, '{}', {}, OPEN);
    expect(answer.status).toBeUndefined();
    expect(answer.error).toMatch(/ECONNREFUSED/);
  });
  it('keeps the connection to a receiver for its next deliveries', async () => {
    const connections: Socket[] = [];
    const receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    receiver.on('connection', (socket: Socket) => connections.push(socket));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      for (let i = 0; i < 3; i++) expect(await postWebhook(url, '{}', {}, OPEN)).toMatchObject({ status: 204 });
      expect(connections).toHaveLength(1);
      // Requests at once each have a connection of their own.
      const together = await Promise.all([0, 1, 2].map(() => postWebhook(url, '{}', {}, OPEN)));
      expect(together.map((a) => a.status)).toEqual([204, 204, 204]);
      expect(connections.length).toBeGreaterThanOrEqual(3);
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });

  it('sends again on a new connection when the receiver closed the kept one as the request went out', async () => {
    // A raw receiver: it answers the first request of each connection, keeping it open, and closes
    // the connection without an answer when a second request arrives on it.
    const sockets: Socket[] = [];
    let connections = 0;
    const requests: string[] = [];
    const receiver = createTcpServer((socket) => {
      connections++;
      sockets.push(socket);
      let answered = 0;
      let buffered = '';
      socket.on('data', (chunk) => {
        buffered += chunk.toString('latin1');
        while (buffered.includes('\r\n\r\n') && buffered.includes('}')) {
          const end = buffered.indexOf('}') + 1;
          requests.push(buffered.slice(0, end));
          buffered = buffered.slice(end);
          if (answered++ === 0) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n');
          else return void socket.destroy();
        }
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      expect(await postWebhook(url, '{"n":1}', {}, OPEN)).toMatchObject({ status: 200, error: undefined });
      expect(await postWebhook(url, '{"n":2}', {}, OPEN)).toMatchObject({ status: 200, error: undefined });
      expect(connections).toBe(2);
      expect(requests.map((r) => r.slice(r.indexOf('{')))).toEqual(['{"n":1}', '{"n":2}', '{"n":2}']);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});
