import { EventSource } from 'eventsource';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * The integrator's side of `bench events`' vehicle.position run, in a process of its own so its
 * parsing does not share the server's event loop: a webhook receiver that verifies every request with
 * the standardwebhooks package, and an EventSource on `GET /events/stream?types=vehicle.position`.
 * argv = streamUrl key webhookSecret. Prints `{"port": N}` once listening and streaming; on SIGTERM,
 * one JSON line: positions received by each (unique, duplicates), bad signatures, and each unique
 * position's delay from its receivedAt (the server's receive time) to its arrival, as [receivedAt, delay] pairs.
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

process.once('SIGTERM', () => {
  source.close();
  const delays = (seen: Map<string, [number, number]>) => [...seen.values()];
  process.stdout.write(`${JSON.stringify({
    requests, badSignatures, hookDuplicates, streamDuplicates, hookUnique: hook.size, streamUnique: stream.size,
    hookDelays: delays(hook), streamDelays: delays(stream),
  })}\n`);
  process.exit(0);
});
