import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
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
});
