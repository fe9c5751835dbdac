import { serve } from '@hono/node-server';
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { createApp } from '../api/app.ts';
import { EventFeed } from '../api/events/event-feed.ts';
import { createMemoryRateLimiter } from '../api/rate-limit/memory-rate-limiter.ts';
import type { DatabaseHandle } from '../db/database.ts';
import { feedFix, type PositionFeed } from '../domain/events/position-feed.ts';
import type { QueueBackend } from '../engine/queue/job-queue.ts';
import { POSITION_WEBHOOK_DEFAULTS, PositionWebhookSender } from '../engine/webhooks/position-webhooks.ts';
import { newWebhookSecret } from '../engine/webhooks/webhook-secret.ts';
import { LocalPositionFeed } from '../ingest/position-feed/local-position-feed.ts';
import { RedisPositionFeed } from '../ingest/position-feed/redis-position-feed.ts';
import { silentLogger } from '../runtime/logger.ts';
import { startBenchPipeline } from './bench-pipeline.ts';
import { runTrackerLoad, type TrackerLoad } from './tracker-load.ts';

export interface PositionFeedRow {
  feed: string;
  positionsPerSec: number;
  ackP99Ms: number;
  stored: number;
  /** CPU time of this process (ingest, the engine, the API and the feed; and the embedded database) per stored position, µs. */
  serverCpuUsPerPosition: number;
  webhookReceived: number;
  webhookP50Ms: number;
  webhookP99Ms: number;
  streamReceived: number;
  streamP50Ms: number;
  streamP99Ms: number;
  duplicates: number;
  badSignatures: number;
  requests: number;
}

/**
 * One run of the pipeline (ingest and the engine, as `fleet serve` wires them) under `load`, with or
 * without the vehicle.position feed. With it: one webhook naming vehicle.position and one stream
 * (`?types=vehicle.position`) over real HTTP, their client in a process of its own
 * (position-feed-client.ts) verifying every request's signature; positions travel through Redis to
 * the stream's API when REDIS_URL is set, as between processes. Delay: from a position's receivedAt
 * (the server's receive time, before its commit) to its arrival at the client, for positions received
 * after the warm-up.
 */
export async function positionFeedRun(
  handle: DatabaseHandle,
  queues: QueueBackend,
  tenant: { accountId: number; userId: number; key: string },
  load: TrackerLoad,
  withFeed: boolean,
): Promise<PositionFeedRow> {
  const cleanup: Array<() => Promise<void> | void> = [];
  const { db } = handle;
  try {
    let accept: ((fixes: Parameters<typeof feedFix>[0][]) => void) | undefined;
    let client: { port: number; finish(steadyFrom: number): Promise<any> } | undefined;
    let sender: PositionWebhookSender | undefined;
    if (withFeed) {
      let ingestSide: PositionFeed;
      let apiSide: PositionFeed;
      if (process.env.REDIS_URL) {
        const connections = [new Redis(process.env.REDIS_URL), new Redis(process.env.REDIS_URL)];
        const channel = `fleetcore-bench-${process.pid}:positions`;
        const publisher = new RedisPositionFeed(connections[0]!, silentLogger, channel);
        const subscriber = new RedisPositionFeed(connections[1]!, silentLogger, channel);
        await subscriber.ready();
        cleanup.push(() => {
          publisher.close();
          subscriber.close();
          for (const c of connections) c.disconnect();
        });
        [ingestSide, apiSide] = [publisher, subscriber];
      } else {
        ingestSide = apiSide = new LocalPositionFeed();
      }
      const eventFeed = await EventFeed.open(db, silentLogger, handle.pool, { pollMs: handle.pool ? 250 : 100 });
      cleanup.push(() => eventFeed.close());
      const app = createApp({
        db, log: silentLogger, rateLimiter: createMemoryRateLimiter(1e9, 10_000), eventFeed, positionFeed: apiSide,
        config: { bodyLimitBytes: 65_536, deviceStatus: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 }, onTimeToleranceMinutes: 5 },
      });
      const http = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
      await new Promise<void>((done) => http.once('listening', () => done()));
      cleanup.push(() => {
        http.close();
        (http as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      const secret = newWebhookSecret();
      client = await startClient(`http://127.0.0.1:${(http.address() as AddressInfo).port}/api/v1/events/stream?types=vehicle.position`, tenant.key, secret);
      await db.deleteFrom('webhooks').where('account_id', '=', tenant.accountId).execute();
      await db.insertInto('webhooks').values({
        account_id: tenant.accountId, user_id: tenant.userId, mode: 'live', url: `http://127.0.0.1:${client.port}/hook`,
        events: ['vehicle.position'], description: 'bench', secret,
      }).execute();
      sender = new PositionWebhookSender(db, silentLogger, { timeoutMs: 15_000, allowPrivate: true, ...POSITION_WEBHOOK_DEFAULTS });
      await sender.start();
      cleanup.push(() => sender!.close());
      accept = (fixes) => {
        const feed = fixes.map(feedFix);
        sender!.accept(feed);
        ingestSide.publish(feed);
      };
    }

    const pipeline = await startBenchPipeline(handle, queues, accept);
    cleanup.push(() => pipeline.stopEngine());
    const { rows: [clock] } = await sql<{ now: Date }>`SELECT now() AS now`.execute(db);
    const startedAt = Date.now();
    const cpu = process.cpuUsage();
    const result = await runTrackerLoad(pipeline.trackerPort, load);
    await pipeline.stopIngest();
    const used = process.cpuUsage(cpu);
    const { rows: [count] } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM positions p JOIN devices d ON d.id = p.device_id WHERE d.account_id = ${tenant.accountId} AND p.server_time >= ${clock!.now}
    `.execute(db);
    const row: PositionFeedRow = {
      feed: withFeed ? 'webhook + stream' : 'none', positionsPerSec: Math.round(result.ackedPerSec), ackP99Ms: Math.round(result.p99), stored: count!.n,
      serverCpuUsPerPosition: Math.round(((used.user + used.system) / Math.max(1, count!.n)) * 10) / 10,
      webhookReceived: 0, webhookP50Ms: 0, webhookP99Ms: 0, streamReceived: 0, streamP50Ms: 0, streamP99Ms: 0, duplicates: 0, badSignatures: 0, requests: 0,
    };
    if (client && sender) {
      // Until the webhook's lane is empty (a minute at most), then a moment for the stream's last messages.
      const hookId = (await db.selectFrom('webhooks').select('id').where('account_id', '=', tenant.accountId).executeTakeFirstOrThrow()).id;
      for (const deadline = Date.now() + 60_000; Date.now() < deadline && sender.waiting(hookId) > 0;) await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 1_000));
      const got = await client.finish(startedAt + load.warmupMs);
      Object.assign(row, {
        webhookReceived: got.hookUnique, webhookP50Ms: Math.round(got.hookP50), webhookP99Ms: Math.round(got.hookP99),
        streamReceived: got.streamUnique, streamP50Ms: Math.round(got.streamP50), streamP99Ms: Math.round(got.streamP99),
        duplicates: got.hookDuplicates + got.streamDuplicates, badSignatures: got.badSignatures, requests: got.requests,
      });
    }
    return row;
  } finally {
    for (const stop of cleanup.reverse()) await stop();
  }
}

async function startClient(streamUrl: string, key: string, secret: string): Promise<{ port: number; finish(steadyFrom: number): Promise<any> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, 'position-feed-client.ts'), streamUrl, key, secret], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) throw new Error('the position feed client exited before it was ready');
  const { port } = JSON.parse(first.value) as { port: number };
  return {
    port,
    async finish(steadyFrom: number) {
      child.stdin!.end(`${steadyFrom}\n`);
      const last = await lines.next();
      if (last.done) throw new Error('the position feed client exited without its counts');
      return JSON.parse(last.value);
    },
  };
}
