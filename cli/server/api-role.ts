import { createAdaptorServer } from '@hono/node-server';
import type { Server } from 'node:http';
import { createApp } from '../../api/app.ts';
import { EventFeed } from '../../api/events/event-feed.ts';
import type { StreamLeases } from '../../api/events/open-streams.ts';
import { TrustedProxies } from '../../api/trusted-proxies.ts';
import type { RateLimiter } from '../../api/rate-limit/rate-limiter.ts';
import type { NotificationServer } from '../../api/route-deps.ts';
import type { DatabaseHandle } from '../../db/database.ts';
import { scheduleTravelStart, unscheduleTravelStart, type EngineQueue } from '../../engine/engine-jobs.ts';
import { enqueueDeliveries, type WebhookQueue } from '../../engine/webhooks/webhook-jobs.ts';
import type { QueueHealth } from '../../engine/queue/queue-health.ts';
import type { CommandBus } from '../../ingest/commands/command-bus.ts';
import type { PositionFeed } from '../../domain/events/position-feed.ts';
import type { Logger } from '../../runtime/logger.ts';
import { listenAndStayUp } from '../../runtime/listening-server.ts';
import type { Config } from '../config.ts';
import { localBaseUrl } from '../commands/demo.ts';

/** What the API tells users of the channels this server sends notifications on (config.notifications). */
function notificationServer(config: Config): NotificationServer {
  const { email, push, telegram, sms } = config.notifications;
  return {
    available: { email: email !== undefined, push: push !== undefined, telegram: telegram !== undefined, sms: sms !== undefined },
    vapidPublicKey: push?.publicKey ?? null,
    // Push endpoints are addresses users give, as webhook URLs are: the same setting lets them be private.
    allowPrivatePushEndpoints: config.webhooks.allowPrivate,
  };
}

export interface RunningApi {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** The API role: the Hono app on HTTP, telling the engine queue when travels must start. */
export async function startApiRole(
  config: Config,
  log: Logger,
  deps: {
    database: DatabaseHandle;
    rateLimiter: RateLimiter;
    overviewRateLimiter: RateLimiter;
    authFailureLimiter: RateLimiter;
    oauthTokenLimiter: RateLimiter;
    /** Failed sign-ins per email (SIGN_IN_FAILURE_LIMIT a minute). */
    signInFailureLimiter?: RateLimiter;
    /** Counts open event streams per credential over every API process (REDIS_URL); absent, per process. */
    streamLeases?: StreamLeases;
    engineQueue: EngineQueue;
    webhookQueue: WebhookQueue;
    /** Whether those two queues take jobs now, for GET /readyz. */
    queueHealth: () => Promise<QueueHealth>;
    commandBus: CommandBus;
    /** Committed fixes for streams that name vehicle.position. */
    positionFeed?: PositionFeed;
    /** Serve GET /metrics on the API port (no METRICS_PORT). */
    metricsOnApiPort: boolean;
  },
): Promise<RunningApi> {
  // One reader of the event log for every stream this process serves; NOTIFY wakes it where it can LISTEN.
  const listen = deps.database.listenPool;
  const eventFeed = await EventFeed.open(deps.database.db, log, listen, { pollMs: listen ? 250 : 100 });
  const app = createApp({
    db: deps.database.db,
    staleReads: deps.database.staleReads,
    log,
    rateLimiter: deps.rateLimiter,
    overviewRateLimiter: deps.overviewRateLimiter,
    eventFeed,
    streamLeases: deps.streamLeases,
    positionFeed: deps.positionFeed,
    config: {
      ...config, webhookAllowPrivate: config.webhooks.allowPrivate, webhooksPerUser: config.webhooks.perUser, eventStream: {
        heartbeatMs: config.eventStreamHeartbeatS * 1000, maxPerCredential: config.eventStreamsPerCredential, maxLifeMs: config.eventStreamMaxLifeS * 1000,
      },
      tripMaxGapS: config.engine.trips.maxGapS,
      commands: { safeStopKmh: config.commands.safeStopKmh, safeStopMaxFixAgeMs: config.commands.safeStopMaxFixAgeMs, maxAttempts: config.commands.maxAttempts },
    },
    commandBus: deps.commandBus,
    metrics: deps.metricsOnApiPort,
    metricsToken: config.metricsToken,
    queueHealth: deps.queueHealth,
    notifications: notificationServer(config),
    authFailureLimiter: deps.authFailureLimiter,
    oauthTokenLimiter: deps.oauthTokenLimiter,
    signInFailureLimiter: deps.signInFailureLimiter,
    sessions: { idleMs: config.access.sessionIdleMs, maxMs: config.access.sessionMaxMs, publicUrl: config.access.publicUrl },
    trustedProxies: new TrustedProxies(config.access.trustProxy),
    oauth: { tokenTtlS: config.access.tokenTtlS, publicUrl: config.access.publicUrl },
    webhookDispatch: {
      deliverSoon: (ids, requestId) => enqueueDeliveries(deps.webhookQueue, ids.map((id) => ({ id, attempts: 0, again: Date.now(), requestId }))),
    },
    travelSchedule: {
      scheduled: (travelId, startTime, requestId) => scheduleTravelStart(deps.engineQueue, travelId, startTime, requestId),
      cancelled: (travelId) => unscheduleTravelStart(deps.engineQueue, travelId),
    },
  });
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  // Slow or stalled clients are cut off instead of holding sockets open.
  server.headersTimeout = 15_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  let port: number;
  try {
    port = await listenAndStayUp(server, {
      host: config.host,
      port: config.port,
      name: 'HTTP API',
      portVariable: 'PORT',
      maxConnections: config.httpMaxConnections,
      log,
    });
  } catch (error) {
    // Its LISTEN connection would otherwise keep the process from exiting.
    await eventFeed.close();
    throw error;
  }
  return {
    url: localBaseUrl({ ...config, port }),
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        // Streams never end on their own: the feed's close ends them, so the server can close.
        void eventFeed.close();
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 5_000).unref();
      }),
  };
}
