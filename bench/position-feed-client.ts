import { EventSource } from 'eventsource';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { summarise } from '../simulators/latency-stats.ts';

/**
 * The integrator's side of `bench events`' vehicle.position run, in a process of its own so its
 * parsing does not share the server's event loop: a webhook receiver that verifies every request with
 * the standardwebhooks package, and an EventSource on `GET /events/stream?types=vehicle.position`.
 * argv = streamUrl key webhookSecret. Prints `{"port": N}` once listening and streaming; when its
 * stdin ends, after a line with a time in ms, one JSON line: positions received by each (unique,
 * duplicates), bad signatures, and the delay p50 / p99 from a position's receivedAt (the server's
 * receive time) to its arrival here, of the positions received by the server from that time on.
 */
const [streamUrl, key, secret] = process.argv.slice(2) as [string, string, string];
const webhook = new Webhook(secret);
/** Position id → [its receivedAt, ms from then to its arrival here]. */
const hook = new Map<string, [number, number]>();
const stream = new Map<string, [number, number]>();
let hookDuplicates = 0;
let streamDuplicates = 0;
let badSignatures = 0;
let requests = 0;

const arrived = (seen: Map<string, [number, number]>, e: { id: string; data: { position: { receivedAt: string } } }): boolean => {
  if (seen.has(e.id)) return false;
  const receivedAt = Date.parse(e.data.position.receivedAt);
  seen.set(e.id, [receivedAt, Date.now() - receivedAt]);
  return true;
};

const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    requests++;
    let payload: { data: { events: Array<{ id: string; data: { position: { receivedAt: string } } }> } };
    try {
      payload = webhook.verify(Buffer.concat(chunks).toString('utf8'), req.headers as IncomingHttpHeaders & Record<string, string>) as typeof payload;
    } catch {
      badSignatures++;
      res.writeHead(400).end();
      return;
    }
    for (const e of payload.data.events) if (!arrived(hook, e)) hookDuplicates++;
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));

const source = new EventSource(streamUrl, {
  fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), Authorization: `Bearer ${key}` } }),
});
source.addEventListener('vehicle.position', (m) => {
  if (!arrived(stream, JSON.parse(m.data as string))) streamDuplicates++;
});
await new Promise<void>((resolve, reject) => {
  source.addEventListener('open', () => resolve(), { once: true });
  source.addEventListener('error', (e) => reject(new Error(`stream: ${(e as { message?: string }).message}`)), { once: true });
});
process.stdout.write(`${JSON.stringify({ port: (receiver.address() as AddressInfo).port })}\n`);

let input = '';
process.stdin.setEncoding('utf8').on('data', (chunk: string) => (input += chunk));
process.stdin.once('end', () => {
  source.close();
  const from = Number(input.trim());
  const delays = (seen: Map<string, [number, number]>) => summarise([...seen.values()].filter(([at]) => at >= from).map(([, delay]) => delay));
  const [hookDelay, streamDelay] = [delays(hook), delays(stream)];
  const summary = {
    requests, badSignatures, hookDuplicates, streamDuplicates, hookUnique: hook.size, streamUnique: stream.size,
    hookP50: hookDelay.p50, hookP99: hookDelay.p99, streamP50: streamDelay.p50, streamP99: streamDelay.p99,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`, () => process.exit(0));
});
