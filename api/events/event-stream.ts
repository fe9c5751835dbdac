import type { SSEStreamingApi } from 'hono/streaming';
import type { AccessScope } from '../../db/access-scope.ts';
import type { Db } from '../../db/database.ts';
import { visibleDevicesByImei } from '../../db/devices.ts';
import { eventPage, type EventFilter, type LoggedEvent } from '../../db/event-log.ts';
import { feedVehicles } from '../../db/position-feed-subscribers.ts';
import { eventPayload } from '../../domain/events/event-payloads.ts';
import { inFixTimeOrder, positionMessage, type FeedFix, type FeedVehicle, type PositionFeed } from '../../domain/events/position-feed.ts';
import { matchesEventType } from '../../domain/events/event-catalog.ts';
import type { EventFeed } from './event-feed.ts';

export interface EventStreamSettings {
  /** A comment line at least this often, so proxies and clients know the stream is alive. */
  heartbeatMs: number;
  /** Events waiting for a client that does not read; past this the stream is closed and the client resumes from its last id. */
  maxQueued: number;
  /** How often the set of vehicles the key may see is read again. */
  visibilityRefreshMs: number;
  /** EVENT_STREAMS_PER_CREDENTIAL: open streams an API key or access token may hold at once. */
  maxPerCredential: number;
  /** EVENT_STREAM_MAX_LIFE_S: a stream is closed this long after it opened, at the latest. */
  maxLifeMs: number;
  /** How often the credentials of open streams are read again, so a revoked one's streams close. */
  credentialCheckMs: number;
}

/** How long a stream told to close may take to finish its last write before its connection is dropped. */
const CLOSE_GRACE_MS = 2_000;

const BACKLOG_PAGE = 500;

/** Positions waiting for a client that does not read (10 s at 10,000 a second, ~200 bytes each); past this the stream is closed. */
export const MAX_QUEUED_POSITIONS = 100_000;

/** A `vehicle.position` waiting to be sent, its message built only when it is. */
interface QueuedPosition {
  vehicle: FeedVehicle;
  fix: FeedFix;
}

/**
 * One open stream: the events after `resumeAfter` from the database (the backlog), then the feed's
 * live events, in id order, each once. It subscribes to the feed before reading the backlog and
 * drops live events at or below the last id sent, so the seam between the two has no gap and no
 * duplicate. Resolves when the client goes away, or when the server closes the stream: for falling
 * behind, when `bounds.signal` aborts (its reason: revoked credential, maximum life), or when the feed
 * ends. A closing stream ends with a comment saying why, after the last event it sent in full, so the
 * client's Last-Event-ID is exactly where to resume; a client that does not read even that is dropped
 * (`bounds.dropConnection`) after a grace period.
 */
export async function runEventStream(
  stream: SSEStreamingApi,
  deps: { db: Db; feed: EventFeed; settings: EventStreamSettings; positions?: PositionFeed },
  scope: AccessScope,
  filter: EventFilter,
  resumeAfter: string | undefined,
  bounds: { signal?: AbortSignal; dropConnection?: () => void } = {},
): Promise<void> {
  const { db, feed, settings } = deps;
  let lastSent = 0n;
  let finished = false;
  /** Why the server closes the stream, written as its last line. */
  let closing: string | undefined;
  let grace: NodeJS.Timeout | undefined;
  /**
   * Logged events, and `vehicle.position` messages between them in the order they came. A position has
   * no log id: it is sent with no `id:` line, so the client's Last-Event-ID stays the last logged event's.
   */
  const queue: Array<LoggedEvent | QueuedPosition> = [];
  let queuedPositions = 0;
  let wake: (() => void) | undefined;
  const nudge = () => {
    wake?.();
    wake = undefined;
  };
  const stop = (why: string) => {
    if (finished) return;
    finished = true;
    closing = why;
    nudge();
    // A write waiting on a client that stopped reading would hold the stream (and its slot) forever.
    grace = setTimeout(() => {
      stream.abort();
      bounds.dropConnection?.();
    }, CLOSE_GRACE_MS);
  };
  // Subscribed before anything is awaited: the response (and the client's `open`) may go out at the
  // first await, and an event committed after that must reach this stream. What arrives before the
  // key's vehicles are known waits in `early` and is filtered then.
  const wantsPositions = deps.positions !== undefined && filter.types !== undefined && matchesEventType(filter.types, 'vehicle.position');
  let ready = false;
  const early: Array<() => void> = [];
  const subscription = feed.subscribe((events) => (ready ? takeEvents(events) : early.push(() => takeEvents(events))), () => stop('the server is stopping; reconnect with Last-Event-ID'));
  const unsubscribePositions = wantsPositions
    ? deps.positions!.subscribe((fixes) => (ready ? takeFixes(fixes) : early.push(() => takeFixes(fixes))))
    : () => undefined;
  let visible: Set<number>;
  let vehicles: Map<number, FeedVehicle>;
  try {
    visible = await visibleDeviceIds(db, scope);
    vehicles = wantsPositions ? await feedVehicles(db, scope) : new Map();
  } catch (error) {
    subscription.unsubscribe();
    unsubscribePositions();
    throw error;
  }
  // Both stay set once set: a client gone, or a stop asked for, while the read above ran is seen here.
  stream.onAbort(() => {
    finished = true;
    nudge();
  });
  if (stream.aborted) finished = true;
  const onSignal = () => stop(String(bounds.signal!.reason));
  if (bounds.signal?.aborted) onSignal();
  else bounds.signal?.addEventListener('abort', onSignal, { once: true });

  const matches = (e: LoggedEvent): boolean => {
    if (e.accountId !== scope.accountId) return false;
    if (e.deviceId === null) {
      if (filter.deviceIds) return false;
      if (e.userId !== null && e.userId !== scope.userId) return false;
      if (e.mode !== null && e.mode !== scope.mode) return false;
    } else {
      if (e.mode !== scope.mode || !visible.has(e.deviceId)) return false;
      if (filter.deviceIds && !filter.deviceIds.includes(e.deviceId)) return false;
    }
    if (filter.types && !matchesEventType(filter.types, e.type)) return false;
    if (filter.from && e.occurredAt < filter.from) return false;
    if (filter.to && e.occurredAt > filter.to) return false;
    return true;
  };

  // vehicle.position is opt-in: only a stream whose types name it gets the positions committed from now on.
  function takeFixes(fixes: readonly FeedFix[]): void {
    for (const f of inFixTimeOrder(fixes)) {
      const vehicle = vehicles.get(f.deviceId);
      if (!vehicle) continue;
      if (filter.deviceIds && !filter.deviceIds.includes(f.deviceId)) continue;
      if ((filter.from && f.fixTime < filter.from.getTime()) || (filter.to && f.fixTime > filter.to.getTime())) continue;
      queue.push({ vehicle, fix: f });
      queuedPositions++;
    }
    if (queuedPositions > MAX_QUEUED_POSITIONS) stop(`more than ${MAX_QUEUED_POSITIONS} positions waited for this client; reconnect, and read missed positions from the position history`);
    nudge();
  }
  function takeEvents(events: LoggedEvent[]): void {
    for (const e of events) if (matches(e)) queue.push(e);
    if (queue.length - queuedPositions > settings.maxQueued) stop(`more than ${settings.maxQueued} events waited for this client; reconnect with Last-Event-ID`);
    nudge();
  }
  ready = true;
  for (const take of early.splice(0)) take();
  const heartbeat = setInterval(() => {
    void stream.write(': heartbeat\n\n').catch(() => undefined);
  }, settings.heartbeatMs);
  const refresh = setInterval(() => {
    visibleDeviceIds(db, scope).then((ids) => (visible = ids), () => undefined);
    if (wantsPositions) feedVehicles(db, scope).then((found) => (vehicles = found), () => undefined);
  }, settings.visibilityRefreshMs);

  const send = async (e: LoggedEvent) => {
    const id = BigInt(e.id);
    if (id <= lastSent) return;
    lastSent = id;
    await stream.writeSSE({ id: e.id, event: e.type, data: JSON.stringify(eventPayload(e)) });
  };

  try {
    await stream.write(`retry: 2000\n: connected\n\n`);
    // Without Last-Event-ID the stream starts where the feed was when it subscribed; the backlog read
    // still covers events the feed had not handed out yet.
    let after = resumeAfter ?? subscription.since;
    while (!finished) {
      const page = await eventPage(db, scope, filter, { order: 'asc', afterId: after, limit: BACKLOG_PAGE });
      for (const e of page.slice(0, BACKLOG_PAGE)) await send(e);
      if (page.length <= BACKLOG_PAGE) break;
      after = page[BACKLOG_PAGE - 1]!.id;
    }
    while (!finished) {
      while (queue.length > 0 && !finished) {
        // Everything waiting at once; a run of positions goes out as one write (thousands a second).
        let positions = '';
        const taken = queue.splice(0, queue.length);
        queuedPositions = 0;
        for (const e of taken) {
          if (finished) break;
          if ('occurredAt' in e) {
            if (positions) await stream.write(positions);
            positions = '';
            await send(e);
          } else {
            positions += `event: vehicle.position\ndata: ${JSON.stringify(positionMessage(e.vehicle, e.fix))}\n\n`;
          }
        }
        if (positions && !finished) await stream.write(positions);
      }
      if (finished) break;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    finished = true;
    subscription.unsubscribe();
    unsubscribePositions();
    clearInterval(heartbeat);
    clearInterval(refresh);
    bounds.signal?.removeEventListener('abort', onSignal);
    if (closing !== undefined && !stream.aborted) {
      await stream.write(`: closed: ${closing}\n\n`);
      await stream.close();
    }
    clearTimeout(grace);
  }
}

async function visibleDeviceIds(db: Db, scope: AccessScope): Promise<Set<number>> {
  return new Set((await visibleDevicesByImei(db, scope)).map((d) => d.id));
}
