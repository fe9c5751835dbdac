import { SSEStreamingApi } from 'hono/streaming';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents } from '../../db/event-log.ts';
import { fixtures } from '../../simulators/fleet-records.ts';
import { silentLogger } from '../../runtime/logger.ts';
import { openTestDatabase, type TestDatabase } from '../../test/support/test-database.ts';
import { EventFeed } from './event-feed.ts';
import { runEventStream, type EventStreamSettings } from './event-stream.ts';

const SETTINGS: EventStreamSettings = {
  heartbeatMs: 60_000, maxQueued: 1_000, visibilityRefreshMs: 60_000, maxPerCredential: 10, maxLifeMs: 3_600_000, credentialCheckMs: 60_000,
};

let database: TestDatabase;
let feed: EventFeed;

beforeAll(async () => {
  database = await openTestDatabase();
  // Polled only when the test says: the feed hands out an event exactly when `read()` is called.
  feed = await EventFeed.open(database.db, silentLogger, undefined, { pollMs: 3_600_000 });
});
afterAll(async () => {
  await feed?.close();
  await database?.destroy();
});

/** A real SSE stream whose bytes the test reads as text. */
function recordedStream(): { stream: SSEStreamingApi; text: () => string } {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const stream = new SSEStreamingApi(writable, readable);
  let text = '';
  const reader = stream.responseReadable.getReader();
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += new TextDecoder().decode(value);
    }
  })();
  return { stream, text: () => text };
}

describe('an event stream', () => {
  it('is subscribed to the feed before it awaits anything, so an event committed once its response has started reaches it', async () => {
    const make = fixtures(database.db);
    const { account, user } = await make.tenant();
    const van = await make.device(account.id, { userIds: [user.id] });
    const { stream, text } = recordedStream();
    const subscribersBefore = feed.subscribers;
    const running = runEventStream(stream, { db: database.db, feed, settings: SETTINGS }, { accountId: account.id, userId: user.id, mode: 'live' }, {}, undefined);
    // The HTTP response (and the client's `open`) may go out at the stream's first await.
    expect(feed.subscribers).toBe(subscribersBefore + 1);
    const [id] = await database.db.transaction().execute((trx) =>
      appendEvents(trx, [{ type: 'vehicle.status.changed', occurredAt: new Date(), deviceId: van.id, data: { from: 'Stopped', to: 'Moving' }, dedupeKey: `stream-open-${van.id}` }]));
    feed.read();
    const deadline = Date.now() + 10_000;
    while (!text().includes(`id: ${id}\n`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(text()).toContain(`id: ${id}\n`);
    expect(text()).toContain('event: vehicle.status.changed\n');
    await stream.abort();
    await running;
  });
});
