import { OpenAPIHono, type Hook } from '@hono/zod-openapi';
import type { Env } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from '../runtime/logger.ts';
import { primaryOnly, type Db, type StaleReads } from '../db/database.ts';
import type { DeviceStatusThresholds } from '../domain/device-status.ts';
import type { AppEnv } from './app-env.ts';
import { authenticate, CredentialCache } from './auth/authenticate.ts';
import { FailedAuthenticationLimit } from './auth/failed-authentication-limit.ts';
import { SESSION_COOKIE, sessionAuthentication, type SessionSettings } from './auth/session-cookie.ts';
import { sessionRoutes, signInRoutes } from './routes/sessions.ts';
import { createMemoryRateLimiter } from './rate-limit/memory-rate-limiter.ts';
import { oauthRoutes, type OAuthSettings } from './oauth/oauth-routes.ts';
import { apiKeyRoutes } from './routes/api-keys.ts';
import { auditRoutes } from './routes/audit.ts';
import { userRoutes } from './routes/users.ts';
import { userSignInLinkRoutes } from './routes/user-sign-in-links.ts';
import { groupRoutes } from './routes/groups.ts';
import { oauthClientRoutes } from './routes/oauth-clients.ts';
import { NAMED_ONLY_PERMISSIONS, PERMISSION_CATALOG, PERMISSIONS } from '../domain/access/permissions.ts';
import { permissionOf } from './auth/require-permission.ts';
import { errorEnvelope } from './envelope.ts';
import { errorResponse } from './error-response.ts';
import { EventFeed } from './events/event-feed.ts';
import type { PositionFeed } from '../domain/events/position-feed.ts';
import type { EventStreamSettings } from './events/event-stream.ts';
import type { StreamLeases } from './events/open-streams.ts';
import { rateLimit } from './rate-limit/rate-limit.ts';
import { eventRoutes } from './routes/events.ts';
import { COMMANDS_GUIDE, commandRoutes } from './routes/commands.ts';
import type { CommandBus } from '../ingest/commands/command-bus.ts';
import type { QueueHealth } from '../engine/queue/queue-health.ts';
import { NO_NOTIFICATION_CHANNELS, type NotificationServer, type TravelSchedule, type WebhookDispatch } from './route-deps.ts';
import type { RateLimiter } from './rate-limit/rate-limiter.ts';
import { deviceRoutes } from './routes/devices.ts';
import { driverRoutes } from './routes/drivers.ts';
import { docsRoutes } from './routes/docs.ts';
import { mapRoutes } from './map/map-routes.ts';
import { consoleRoutes } from './console/console-routes.ts';
import { firstRunRoutes } from './routes/first-run.ts';
import type { MapTiles } from './map/map-tiles.ts';
import { geofenceRoutes } from './routes/geofences.ts';
import { healthRoutes } from './routes/health.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { resolveClientAddress } from './client-address.ts';
import { requestContext } from './request-context.ts';
import type { TrustedProxies } from './trusted-proxies.ts';
import { LatestStateReads } from './fresh-reads/latest-state-reads.ts';
import { reportRoutes } from './routes/reports.ts';
import { tripReportRoutes } from './routes/trip-report.ts';
import { travelRoutes } from './routes/travels.ts';
import { mediaRoutes } from './routes/media.ts';
import { vehicleRoutes } from './routes/vehicles.ts';
import { vehiclePositionRoutes } from './routes/vehicle-positions.ts';
import { vehicleAccumulatorRoutes } from './routes/vehicle-accumulators.ts';
import { maintenanceRoutes } from './routes/maintenance.ts';
import { WEBHOOK_SIGNING, webhookRoutes } from './routes/webhooks.ts';
import { notificationRuleRoutes } from './routes/notification-rules.ts';
import { notificationSettingRoutes } from './routes/notification-settings.ts';
import { reportSubscriptionRoutes } from './routes/report-subscriptions.ts';

export const API_PREFIX = '/api/v1';

export interface AppDeps {
  db: Db;
  /**
   * Reads that tolerate a few seconds of staleness (DATABASE_READ_URL's replica while it keeps up);
   * absent, they go to `db`. Authentication, writes and the event stream always use `db`.
   */
  staleReads?: StaleReads;
  log: Logger;
  /** The detailed endpoints' limit (50 per 10 s by default). */
  rateLimiter: RateLimiter;
  /** The overview endpoints' limit (600 per minute by default); absent, they share the detailed one. */
  overviewRateLimiter?: RateLimiter;
  /** The process's reader of the event log for streams; absent, one is opened (polling) on the first stream. */
  eventFeed?: EventFeed;
  /** Counts event streams per credential over every API process (Redis); absent, each process counts its own. */
  streamLeases?: StreamLeases;
  /** Committed fixes, for streams that name `vehicle.position`; absent, such streams get no positions. */
  positionFeed?: PositionFeed;
  config: {
    bodyLimitBytes: number;
    deviceStatus: DeviceStatusThresholds;
    onTimeToleranceMinutes: number;
    webhookAllowPrivate?: boolean;
    /** WEBHOOKS_PER_USER: webhooks one user may have in one mode (default 20). */
    webhooksPerUser?: number;
    eventStream?: Partial<EventStreamSettings>;
    /** TRIP_MAX_GAP_S: a trip in progress whose vehicle has been silent this long is shown ended (default 3600). */
    tripMaxGapS?: number;
    /** COMMAND_SAFE_STOP_KMH, COMMAND_SAFE_STOP_MAX_FIX_AGE_S (in ms) and COMMAND_MAX_ATTEMPTS (defaults 20, 60 s and 3). */
    commands?: { safeStopKmh: number; safeStopMaxFixAgeMs: number; maxAttempts: number };
    /** MAP_TILE_URL and MAP_TILE_ATTRIBUTION: a tile server under the live map; absent, the map is offline. */
    mapTiles?: MapTiles;
  };
  travelSchedule?: TravelSchedule;
  webhookDispatch?: WebhookDispatch;
  /** Wakes the process holding a device's connection when a command is queued for it. */
  commandBus?: Pick<CommandBus, 'notify'>;
  /**
   * Counts 401s per client address (AUTH_FAILURE_LIMIT a minute, then 429); absent, one in this
   * process allowing 20 a minute. With REDIS_URL it lives in Redis, shared by every API process.
   */
  authFailureLimiter?: RateLimiter;
  /** Access tokens' life and the issuer URL; absent, an hour and the request's origin. */
  oauth?: OAuthSettings;
  /** Tokens issued per OAuth client (OAUTH_TOKEN_RATE_LIMIT a minute); absent, 30 a minute in this process. */
  oauthTokenLimiter?: RateLimiter;
  /** SESSION_IDLE_MINUTES and SESSION_MAX_DAYS (in ms) and PUBLIC_URL for sign-in sessions; absent, 12 hours idle, 30 days at most. */
  sessions?: { idleMs: number; maxMs: number; publicUrl?: string };
  /** Failed sign-ins per email (SIGN_IN_FAILURE_LIMIT a minute, Redis with REDIS_URL); absent, 5 a minute in this process. */
  signInFailureLimiter?: RateLimiter;
  /** TRUST_PROXY: the proxies whose X-Forwarded-For names the client; absent, none. */
  trustedProxies?: TrustedProxies;
  /** Serve GET /metrics on this app (default); false when METRICS_PORT serves it on a port of its own. */
  metrics?: boolean;
  /** METRICS_TOKEN: GET /metrics asks for this bearer token; absent, it is open. */
  metricsToken?: string;
  /** Whether the queues this process adds jobs to take them, for GET /readyz; absent, only the database is checked. */
  queueHealth?: () => Promise<QueueHealth>;
  /** The notification channels this server sends on (SMTP_URL, VAPID_*, TELEGRAM_BOT_TOKEN, SMS_URL); absent, none. */
  notifications?: NotificationServer;
}

type ValidationResult = Parameters<Hook<unknown, Env, string, unknown>>[0];

/** One readable sentence per problem: `waypoints.0.geofence is required`. */
function validationMessage(result: ValidationResult): string {
  if (result.success) return '';
  const messages = result.error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    if (!path) return issue.message;
    if (/received undefined$/.test(issue.message)) return `${path} is required`;
    const expected = /^Invalid input: expected (\w+), received (\w+)$/.exec(issue.message);
    if (expected) return `${path} must be ${/^[aeiou]/.test(expected[1]!) ? 'an' : 'a'} ${expected[1]}, not ${expected[2]}`;
    const key = String(issue.path[issue.path.length - 1]);
    return issue.message.includes(key) ? issue.message : `${path}: ${issue.message}`;
  });
  return [...new Set(messages)].join('; ');
}

/** The whole HTTP surface: health, the API under /api/v1, its OpenAPI document and the /docs page. */
export function createApp(deps: AppDeps) {
  const { db, log } = deps;
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) return c.json(errorEnvelope(validationMessage(result)), 400);
    },
  });

  app.use('*', resolveClientAddress(deps.trustedProxies));
  app.use('*', requestContext(log));
  const staleReads = deps.staleReads ?? primaryOnly(db);
  const latestState = new LatestStateReads(staleReads.db, deps.config.deviceStatus);
  const credentials = new CredentialCache();
  // This process's own writes (a vehicle renamed, a key or token revoked) show in its next request;
  // other processes see them within a second, as every process re-reads its caches that often.
  app.use('*', async (c, next) => {
    await next();
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD' && c.res.status < 400) {
      // Before the caches are cleared, so their next read cannot come from a replica without the write.
      staleReads.wrote();
      latestState.clear();
      credentials.clear();
    }
  });
  app.onError(errorResponse(log));
  app.notFound((c) => c.json(errorEnvelope(`Not found: ${c.req.method} ${c.req.path}`), 404));

  app.route('/', healthRoutes(db, log, deps.queueHealth));
  if (deps.metrics !== false) app.route('/', metricsRoutes(log, { token: deps.metricsToken }));
  const failures = new FailedAuthenticationLimit(
    deps.authFailureLimiter ?? createMemoryRateLimiter(20, 60_000), log, deps.signInFailureLimiter ?? createMemoryRateLimiter(5, 60_000),
  );
  const sessionSettings: SessionSettings = {
    idleMs: 12 * 3_600_000, maxMs: 30 * 86_400_000, publicUrl: deps.oauth?.publicUrl, ...deps.sessions, trustedProxies: deps.trustedProxies,
  };
  app.route('/', oauthRoutes(db, log, deps.oauth ?? { tokenTtlS: 3600 }, {
    clientFailed: (c) => failures.failed(c),
    tokens: deps.oauthTokenLimiter ?? createMemoryRateLimiter(30, 60_000),
  }));
  app.route('/docs', docsRoutes(`${API_PREFIX}/openapi.json`));
  app.route('/map', mapRoutes(deps.config.mapTiles));
  app.route('/console', consoleRoutes(deps.config.mapTiles));
  app.get('/', (c) => c.redirect('/console'));

  const api = new OpenAPIHono<AppEnv>();
  api.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'API key as a bearer token',
  });
  api.openAPIRegistry.registerComponent('securitySchemes', 'apiKeyHeader', { type: 'apiKey', in: 'header', name: 'X-Api-Key' });
  api.openAPIRegistry.registerComponent('securitySchemes', 'sessionCookie', {
    type: 'apiKey', in: 'cookie', name: SESSION_COOKIE,
    description: 'A signed-in session (POST /auth/sign-in); used only when the request has no Authorization or X-Api-Key header; writes also need X-CSRF-Token',
  });
  api.openAPIRegistry.registerComponent('securitySchemes', 'oauth2', {
    type: 'oauth2',
    description: 'OAuth 2.0 client credentials (RFC 6749 §4.4); the token is sent as a bearer token. Metadata: /.well-known/oauth-authorization-server',
    flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: { ...PERMISSION_CATALOG, '*': `every permission but ${[...NAMED_ONLY_PERMISSIONS].join(', ')}` } } },
  });
  // Registered before the authentication middleware, so the document itself is public.
  api.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'fleetcore API',
      version: '1.0.0',
      description: [
        'GPS fleet tracking: device status, geofences, geofence reports, travels, vehicles and their position history, drivers, remote commands, the event log with its live stream, webhooks, and notifications for people (rules, their own addresses, report emails).',
        `Key permissions: ${PERMISSIONS.join(', ')}, or * for all of them but ${[...NAMED_ONLY_PERMISSIONS].join(', ')}, which a key holds only when granted by name. Each operation's security requirement names the one it needs.`,
        'Rate limits per key: 50 requests per 10 s on the detailed endpoints (device status, GET /geofences, the geofence report, travels), 600 per minute on the others; every answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset for the limit that applies. Honour the stricter.',
      ].join('\n\n'),
    },
    // The signing rules stand at the head of the Webhooks section, where receivers' authors look.
    tags: [{ name: 'Webhooks', description: WEBHOOK_SIGNING }, { name: 'Commands', description: COMMANDS_GUIDE }],
    servers: [{ url: API_PREFIX }],
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }, { oauth2: [] }],
  });
  const limitBody = bodyLimit({
    maxSize: deps.config.bodyLimitBytes,
    onError: (c) => c.json(errorEnvelope(`Request body is larger than ${deps.config.bodyLimitBytes} bytes`), 413),
  });
  // GET and HEAD bodies are never read (Node discards them as they arrive); looking for one would
  // build the full fetch Request of every read, a measurable share of the fleet-wide reads' time.
  api.use('*', (c, next) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next)));
  api.route('/', signInRoutes(db, sessionSettings, failures));
  api.route('/', firstRunRoutes(db, sessionSettings, failures));
  api.use('*', failures.middleware());
  api.use('*', sessionAuthentication(db, sessionSettings));
  api.use('*', authenticate(db, log, credentials));
  api.use('*', rateLimit({ detailed: deps.rateLimiter, overview: deps.overviewRateLimiter ?? deps.rateLimiter }, API_PREFIX, log));
  const routeDeps = {
    db, staleDb: staleReads.db, log, config: deps.config, travelSchedule: deps.travelSchedule, webhookDispatch: deps.webhookDispatch, commandBus: deps.commandBus, latestState,
    notifications: deps.notifications ?? NO_NOTIFICATION_CHANNELS,
  };
  api.route('/', deviceRoutes(routeDeps));
  api.route('/', geofenceRoutes(routeDeps));
  api.route('/', reportRoutes(routeDeps));
  api.route('/', tripReportRoutes(routeDeps));
  api.route('/', travelRoutes(routeDeps));
  api.route('/', webhookRoutes(routeDeps));
  api.route('/', vehicleRoutes(routeDeps));
  api.route('/', vehiclePositionRoutes(routeDeps));
  api.route('/', vehicleAccumulatorRoutes(routeDeps));
  api.route('/', maintenanceRoutes(routeDeps));
  api.route('/', driverRoutes(routeDeps));
  api.route('/', commandRoutes(routeDeps));
  api.route('/', mediaRoutes(routeDeps));
  api.route('/', apiKeyRoutes(routeDeps));
  api.route('/', oauthClientRoutes(routeDeps));
  api.route('/', auditRoutes(routeDeps));
  api.route('/', sessionRoutes(db, sessionSettings, failures));
  api.route('/', userRoutes(routeDeps));
  api.route('/', userSignInLinkRoutes(routeDeps, sessionSettings.publicUrl));
  api.route('/', groupRoutes(routeDeps));
  api.route('/', notificationRuleRoutes(routeDeps));
  api.route('/', notificationSettingRoutes(routeDeps));
  api.route('/', reportSubscriptionRoutes(routeDeps));
  let feed: Promise<EventFeed> | undefined = deps.eventFeed ? Promise.resolve(deps.eventFeed) : undefined;
  api.route('/', eventRoutes({
    ...routeDeps,
    eventFeed: () => (feed ??= EventFeed.open(db, log, undefined, { pollMs: 100 })),
    eventStream: {
      heartbeatMs: 15_000, maxQueued: 10_000, visibilityRefreshMs: 10_000, maxPerCredential: 10, maxLifeMs: 86_400_000, credentialCheckMs: 1_000,
      ...deps.config.eventStream,
    },
    streamLeases: deps.streamLeases,
    positionFeed: deps.positionFeed,
  }));
  documentPermissions(api);
  app.route(API_PREFIX, api);
  return app;
}

/**
 * Each operation's security requirement names the permission its key needs, as OpenAPI 3.1 allows
 * role names for non-OAuth schemes: `[{bearerAuth: ["vehicles:read"]}, {apiKeyHeader: ["vehicles:read"]}]`.
 * Read from the routes' own requirePermission middleware, so the document cannot disagree with it.
 */
function documentPermissions(api: OpenAPIHono<AppEnv>): void {
  // The registry drops each route's middleware; the router still holds it, under Hono's `:param` paths.
  const needed = new Map<string, string>();
  for (const route of api.routes) {
    const permission = permissionOf(route.handler);
    if (permission) needed.set(`${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`, permission);
  }
  for (const definition of api.openAPIRegistry.definitions) {
    if (definition.type !== 'route') continue;
    const permission = needed.get(`${definition.route.method} ${definition.route.path}`);
    if (permission) definition.route.security = [{ bearerAuth: [permission] }, { apiKeyHeader: [permission] }, { oauth2: [permission] }];
  }
}

export type App = ReturnType<typeof createApp>;
