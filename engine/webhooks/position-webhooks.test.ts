import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../db/database.ts';
import type { PositionWebhook } from '../../db/position-feed-subscribers.ts';
import type { FeedFix } from '../../domain/events/position-feed.ts';
import { silentLogger } from '../../runtime/logger.ts';
import { PositionWebhookSender } from './position-webhooks.ts';
import { newWebhookSecret } from './webhook-secret.ts';

// The sender against a real HTTP receiver that verifies each request with the standardwebhooks package.

const secret = newWebhookSecret();
const vehicle = (imei: string) => ({ id: imei, name: `Van ${imei}`, plates: 'P', imei });
const fix = (deviceId: number, fixTime: number): FeedFix => ({
  deviceId, fixTime, receivedAt: fixTime, latitude: 19.4, longitude: -99.1, speedKmh: 10, heading: 0, altitude: null, satellites: 8,
  valid: true, ignition: true, motion: true, odometerKm: null, powerVoltage: null,
});

interface Received { id: string; events: Array<{ id: string; data: { vehicle: { imei: string }; position: { fixTime: string } } }> }

let server: Server | undefined;
let sender: PositionWebhookSender | undefined;
afterEach(() => {
  sender?.close();
  server?.close();
  server?.closeAllConnections();
});

/** A receiver that answers with `answer(n)` for its n-th request (0-based) after `delayMs`, keeping what verified. */
async function receiver(answer: (n: number) => number = () => 204, delayMs = 0) {
  const received: Received[] = [];
  const ids: string[] = [];
  let requests = 0;
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = requests++;
      ids.push(String(req.headers['webhook-id']));
      const body = Buffer.concat(chunks).toString('utf8');
      const payload = new Webhook(secret).verify(body, req.headers as IncomingHttpHeaders & Record<string, string>) as { id: string; data: { events: Received['events'] } };
      setTimeout(() => {
        const status = answer(n);
        if (status < 300) received.push({ id: payload.id, events: payload.data.events });
        res.writeHead(status).end();
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}/hook`, received, ids, requests: () => requests };
}

function hook(url: string, devices: number[], id = 1): PositionWebhook {
  return { id, accountId: 1, url, secrets: [secret], vehicles: new Map(devices.map((d) => [d, vehicle(`35000000000000${d}`)])) };
}

const newSender = (settings: Partial<{ batchSize: number; inFlight: number; maxQueued: number }> = {}) =>
  new PositionWebhookSender(undefined as unknown as Db, silentLogger, { timeoutMs: 5_000, allowPrivate: true, batchSize: 100, inFlight: 1, maxQueued: 10_000, refreshMs: 60_000, ...settings });

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('position webhooks', () => {
  it('batch up to batchSize positions under one signature, inFlight requests at a time, each vehicle in fix-time order, only its vehicles', async () => {
    const r = await receiver(() => 204, 20);
    sender = newSender({ batchSize: 100, inFlight: 2 });
    sender.use([hook(r.url, [1, 2])]);
    // 1,000 fixes of three devices in batches of 50, each batch in reverse fix time; device 3 is not the webhook's.
    for (let b = 0; b < 20; b++) {
      const batch: FeedFix[] = [];
      for (let i = 49; i >= 0; i--) batch.push(fix(1 + ((b * 50 + i) % 3), 1_000_000 + (b * 50 + i) * 1_000));
      sender.accept(batch);
    }
    const expected = Array.from({ length: 1000 }, (_, n) => n).filter((n) => n % 3 !== 2).length;
    await until(() => sender!.counts.delivered === expected);
    expect(r.received.length).toBeLessThan(expected); // batched: far fewer requests than positions
    expect(Math.max(...r.received.map((x) => x.events.length))).toBeLessThanOrEqual(100);
    expect(new Set(r.received.map((x) => x.id)).size).toBe(r.received.length);
    const all = r.received.flatMap((x) => x.events);
    expect(all.every((e) => e.data.vehicle.imei !== vehicle('350000000000003').imei)).toBe(true);
    expect(new Set(all.map((e) => e.id)).size).toBe(expected);
    for (const imei of ['350000000000001', '350000000000002']) {
      const times = all.filter((e) => e.data.vehicle.imei === imei).map((e) => e.data.position.fixTime);
      expect(times).toEqual([...times].sort());
    }
  });

  it('sends a failed batch again with the same webhook-id and body, before anything queued behind it', async () => {
    const r = await receiver((n) => (n < 2 ? 503 : 204));
    sender = newSender();
    sender.use([hook(r.url, [1])]);
    sender.accept([fix(1, 1_000), fix(1, 2_000)]);
    await until(() => r.requests() >= 1);
    sender.accept([fix(1, 3_000)]);
    await until(() => sender!.counts.delivered === 3, 15_000);
    expect(sender.counts.failedAttempts).toBe(2);
    expect(r.ids[1]).toBe(r.ids[0]);
    expect(r.ids[2]).toBe(r.ids[0]);
    expect(r.ids[3]).not.toBe(r.ids[0]);
    expect(r.received.map((x) => x.events.map((e) => e.data.position.fixTime.slice(17, 19)))).toEqual([['01', '02'], ['03']]);
  }, 20_000);

  it('keeps at most maxQueued positions for a receiver that is down, dropping the oldest', async () => {
    const r = await receiver(() => 503);
    sender = newSender({ batchSize: 10, maxQueued: 100 });
    sender.use([hook(r.url, [1])]);
    sender.accept(Array.from({ length: 10 }, (_, i) => fix(1, i * 1_000)));
    await until(() => r.requests() >= 1);
    sender.accept(Array.from({ length: 500 }, (_, i) => fix(1, (10 + i) * 1_000)));
    expect(sender.waiting(1)).toBe(110); // the batch being retried, and the newest 100
    expect(sender.counts.dropped).toBe(400);
    sender.use([]); // unsubscribed: its lane and what waited in it go
    expect(sender.waiting(1)).toBe(0);
  });
});
