import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { HttpBindings } from '@hono/node-server';
import { streamSSE } from 'hono/streaming';
import { eventPage } from '../../db/event-log.ts';
import { eventPayload } from '../../domain/events/event-payloads.ts';
import { insertStreamToken } from '../../db/stream-tokens.ts';
import { EVENT_TYPES } from '../../domain/events/event-catalog.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { STREAM_TOKEN_TTL_MS, issueStreamToken } from '../auth/stream-token.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import { decodeEventCursor, encodeEventCursor } from '../events/event-cursor.ts';
import type { EventFeed } from '../events/event-feed.ts';
import { eventFilterQuery, parseEventFilter } from '../events/event-query.ts';
import type { PositionFeed } from '../../domain/events/position-feed.ts';
import { runEventStream, type EventStreamSettings } from '../events/event-stream.ts';
import { OpenStreams, type StreamLeases } from '../events/open-streams.ts';
import type { RouteDeps } from '../route-deps.ts';

export const EventSchema = z
  .object({
    id: z.string().openapi({ description: 'Event id: increasing in the order events were committed', example: '1042' }),
    type: z.enum(EVENT_TYPES).openapi({ example: 'vehicle.geofence.enter' }),
    timestamp: z.string().openapi({ format: 'date-time', description: 'When it happened (the fix time for what a fix showed), ISO 8601 UTC' }),
    data: z.record(z.string(), z.unknown()).openapi({
      description: 'vehicle {id, name, plates, imei} for vehicle events; position {lat, lng, speedKmh, heading, fixTime} when there is one, with address for the events the engine logs from fixes (the reverse-geocoded address known when it was logged, if looked up within GEOCODER_REUSE_DISTANCE_M of the position, else null; never added later); the type\'s own fields (see the README\'s event catalog)',
      example: {
        vehicle: { id: '356307042441013', name: 'Truck 12', plates: 'ABC-123', imei: '356307042441013' },
        position: { lat: 19.4326, lng: -99.1332, speedKmh: 32, heading: 90, fixTime: '2024-05-01T14:30:00.000Z', address: 'Avenida Paseo de la Reforma 222, Juárez, Ciudad de México, México' },
        geofence: { id: 12, name: 'Depot North' },
      },
    }),
  })
  .openapi('Event');

const LoggedEventSchema = EventSchema.extend({
  recordedAt: z.string().openapi({ format: 'date-time', description: 'When the event was written to the log' }),
}).openapi('LoggedEvent');

const EventPageSchema = z
  .object({
    data: z.array(LoggedEventSchema),
    has_more: z.boolean(),
    next_cursor: z.string().nullable().openapi({ description: 'Pass as cursor (with the same order and filters) for the next page; null when has_more is false' }),
  })
  .openapi('EventPage');

const listEvents = createRoute({
  method: 'get',
  path: '/events',
  tags: ['Events'],
  summary: 'The event log: geofence, driving, alarm, connection and travel events',
  description:
    'Newest first by default. Cursor pages never repeat or skip an event, even while new ones arrive: ids are handed out in commit order. A key sees the events of the vehicles its user may see, in its own mode.',
  middleware: [requirePermission('events:read')] as const,
  request: {
    query: z.object({
      ...eventFilterQuery,
      order: z.enum(['desc', 'asc']).default('desc').openapi({ description: 'desc: newest first (default); asc: oldest first' }),
      limit: z.coerce.number().int().min(1).max(500).default(50).openapi({ description: '1 to 500, default 50' }),
      cursor: z.string().optional().openapi({ description: 'next_cursor of the previous page' }),
    }),
  },
  responses: {
    200: { description: 'A page of events', content: { 'application/json': { schema: EventPageSchema } } },
    ...errorResponses([400, 'Invalid filter, limit or cursor'], [404, 'A listed device does not exist or is not accessible']),
  },
});

const streamEvents = createRoute({
  method: 'get',
  path: '/events/stream',
  tags: ['Events'],
  summary: 'Live events as Server-Sent Events',
  description: [
    'One message per event: `id:` the event id, `event:` its type, `data:` the event JSON (as a webhook receives it). A `: heartbeat` comment at least every 15 s.',
    'Resume with the `Last-Event-ID` header (EventSource sends it on reconnect) or `lastEventId`: the stream replays every event after that id, then goes live, with no gap and no duplicate, on any API process.',
    'Authenticate with the usual headers, or, from a browser EventSource (which cannot send headers), with `?token=` from POST /events/stream-tokens. API keys are never accepted in a URL.',
    'A client that stops reading is disconnected once 10,000 events wait for it; it resumes with Last-Event-ID.',
    'Streams are bounded: an API key or access token holds at most 10 open streams (EVENT_STREAMS_PER_CREDENTIAL; 429 past that, over every API process), a stream ends within seconds of its credential being revoked or expiring, and at the latest after 24 h (EVENT_STREAM_MAX_LIFE_S), with a `: closed: <why>` comment after the last event sent in full: reconnecting with Last-Event-ID loses and repeats nothing.',
  ].join('\n\n'),
  middleware: [requirePermission('events:read')] as const,
  request: {
    query: z.object({
      ...eventFilterQuery,
      lastEventId: z.string().optional().openapi({ description: 'Resume after this event id (the Last-Event-ID header wins when both are given)' }),
      token: z.string().optional().openapi({ description: 'A stream token from POST /events/stream-tokens, for clients that cannot send headers' }),
    }),
    headers: z.object({ 'last-event-id': z.string().optional().openapi({ description: 'Resume after this event id' }) }),
  },
  responses: {
    200: {
      description: 'The event stream',
      content: { 'text/event-stream': { schema: z.string().openapi({ example: 'id: 1042\nevent: vehicle.geofence.enter\ndata: {"id":"1042","type":"vehicle.geofence.enter",...}\n\n' }) } },
    },
    ...errorResponses(
      [400, 'Invalid filter or Last-Event-ID'],
      [404, 'A listed device does not exist or is not accessible'],
      [429, 'Rate limit exceeded, or the API key or access token already holds as many open streams as it may; see Retry-After'],
    ),
  },
});

const StreamTokenSchema = z
  .object({
    token: z.string().openapi({ example: 'fst_Q2hvb3NlIGEgbG9uZyByYW5kb20gdG9rZW4' }),
    expiresAt: z.string().openapi({ format: 'date-time' }),
    expiresInSeconds: z.number().int().openapi({ example: 60 }),
  })
  .openapi('StreamToken');

const createStreamToken = createRoute({
  method: 'post',
  path: '/events/stream-tokens',
  tags: ['Events'],
  summary: 'A short-lived token for opening event streams from a browser',
  description:
    'For `new EventSource("/api/v1/events/stream?token=...")`. The token opens one stream, once, within 60 s, with this key\'s user, mode and permissions, and does nothing else; the stream counts against this key\'s open streams and closes when the key is revoked. An EventSource that reconnects with a used token gets 401: ask for a new token and open a new EventSource with the last event id as lastEventId.',
  middleware: [requirePermission('events:read')] as const,
  responses: {
    201: { description: 'The token', content: { 'application/json': { schema: envelopeSchema(StreamTokenSchema, 'StreamTokenResponse') } } },
    ...errorResponses(),
  },
});

const EVENT_ID = /^\d{1,19}$/;

export function eventRoutes({ db, staleDb, log, eventFeed, eventStream, streamLeases, positionFeed }: RouteDeps & {
  eventFeed: () => Promise<EventFeed>;
  eventStream: EventStreamSettings;
  /** Counts open streams per credential over every API process (REDIS_URL); absent, per process. */
  streamLeases?: StreamLeases;
  /** Committed fixes for streams that name vehicle.position; absent, such a stream gets none. */
  positionFeed?: PositionFeed;
}) {
  const app = new OpenAPIHono<AppEnv>();
  const openStreams = new OpenStreams(db, log, eventStream, streamLeases);

  app.openapi(listEvents, async (c) => {
    const { scope, timezone } = c.get('principal');
    const query = c.req.valid('query');
    // A replica holds a prefix of the log in commit order, so its pages skip nothing either; the
    // stream below stays on the primary, whose feed and resume follow the log as it is committed.
    const filter = await parseEventFilter(staleDb, scope, timezone, query);
    const position = query.cursor === undefined ? undefined : decodeEventCursor(query.cursor, query.order);
    const rows = await eventPage(staleDb, scope, filter, {
      order: query.order,
      limit: query.limit,
      ...(query.order === 'asc' ? { afterId: position } : { beforeId: position }),
    });
    const page = rows.slice(0, query.limit);
    const hasMore = rows.length > query.limit;
    return c.json(
      {
        data: page.map((e) => ({ ...eventPayload(e), recordedAt: e.recordedAt.toISOString() })),
        has_more: hasMore,
        next_cursor: hasMore ? encodeEventCursor(query.order, page[page.length - 1]!.id) : null,
      },
      200,
    );
  });

  app.openapi(streamEvents, async (c) => {
    const principal = c.get('principal');
    const { scope, timezone } = principal;
    const query = c.req.valid('query');
    const filter = await parseEventFilter(db, scope, timezone, query);
    const resume = c.req.header('last-event-id')?.trim() || query.lastEventId?.trim() || undefined;
    if (resume !== undefined && !EVENT_ID.test(resume)) throw new ApiError(400, `Last-Event-ID must be an event id (digits), got "${resume.slice(0, 40)}"`);
    const feed = await eventFeed();
    const slot = await openStreams.open(principal);
    // On Node's HTTP server, the socket of a client that stopped reading is closed outright.
    const outgoing = (c.env as Partial<HttpBindings> | undefined)?.outgoing;
    c.header('X-Accel-Buffering', 'no'); // nginx would otherwise hold events back in its buffer
    return streamSSE(c, async (stream) => {
      try {
        await runEventStream(stream, { db, feed, settings: eventStream, positions: positionFeed }, scope, filter, resume, { signal: slot.signal, dropConnection: () => outgoing?.destroy() });
      } finally {
        slot.release();
      }
    }) as never;
  });

  app.openapi(createStreamToken, async (c) => {
    const principal = c.get('principal');
    const { token, hash } = issueStreamToken();
    const expiresAt = new Date(Date.now() + STREAM_TOKEN_TTL_MS);
    const { credential } = principal;
    if (credential.kind === 'session') throw new ApiError(400, 'A signed-in session opens GET /events/stream with its cookie; stream tokens are for API keys and access tokens');
    // The stream token opens one stream as its credential would, and expires no later than the credential.
    const until = principal.expiresAt && principal.expiresAt < expiresAt ? principal.expiresAt : expiresAt;
    await insertStreamToken(db, hash, credential.kind === 'api_key' ? { apiKeyId: credential.id } : { oauthTokenId: credential.id }, until);
    return c.json(envelope({ token, expiresAt: until.toISOString(), expiresInSeconds: Math.max(0, Math.round((until.getTime() - Date.now()) / 1000)) }), 201);
  });

  return app;
}
