import { resolve } from 'node:path';
import type { MapTiles } from '../api/map/map-tiles.ts';
import { TrustedProxies, TrustedProxyListError } from '../api/trusted-proxies.ts';
import { DEFAULT_MAX_WAITING_BYTES, DEFAULT_MAX_WAITING_ROWS } from '../ingest/group-commit.ts';
import { TRACKER_PROTOCOLS } from '../ingest/protocol-catalog.ts';
import { DEFAULT_LOGIN_TIMEOUT_MS, DEFAULT_MAX_UNIDENTIFIED_PER_ADDRESS } from '../ingest/unidentified-connections.ts';
import { defaultMaxConnections } from '../runtime/file-descriptor-limit.ts';
import { LOG_LEVELS, type LogLevel } from '../runtime/logger.ts';
import { StartupError } from '../runtime/startup-error.ts';
import { DEFAULT_READ_REPLICA_MAX_LAG_MS } from '../db/read-replica.ts';
import { POOL_MODES, type PoolMode } from '../db/database.ts';
import type { RedisClusterSettings } from '../runtime/redis-client.ts';
import { redisClusterSettings } from './redis-cluster-nodes.ts';
import type { GeocoderSettings } from '../engine/geocoding/reverse-geocoder.ts';
import { accountInFlight, WEBHOOK_CONCURRENCY_DEFAULT } from '../engine/webhooks/start-webhook-delivery.ts';
import { notificationConfig, type NotificationConfig } from './notification-config.ts';
import { MAX_ENGINE_QUEUES } from '../engine/engine-queues.ts';
import type { DrivingSettings } from '../domain/driving/driving-behaviour.ts';
import type { FuelThresholds } from '../domain/fuel/device-fuel.ts';
import { MAX_PLAUSIBLE_MS2 } from '../domain/driving/harsh-driving.ts';
import { flag, integer, type Env } from './env-values.ts';


export interface Config {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | undefined;
  /** DATABASE_READ_URL: a streaming replica of DATABASE_URL for the API's reads that tolerate staleness. */
  readDatabaseUrl: string | undefined;
  /** READ_REPLICA_MAX_LAG_MS: a replica further behind the primary is skipped until it catches up. */
  readReplicaMaxLagMs: number;
  /** DATABASE_POOL_MODE: `transaction` when DATABASE_URL is a pooler in transaction mode (PgBouncer's pool_mode). */
  databasePoolMode: PoolMode;
  /** DATABASE_LISTEN_URL: a direct PostgreSQL connection for LISTEN, when DATABASE_URL's pooler cannot carry it. */
  listenDatabaseUrl: string | undefined;
  redisUrl: string | undefined;
  /** REDIS_CLUSTER_NODES with REDIS_PASSWORD: a Redis Cluster instead of REDIS_URL (never both). */
  redisCluster: RedisClusterSettings | undefined;
  logLevel: LogLevel;
  /** The detailed endpoints' limit per key. */
  rateLimit: { max: number; windowMs: number };
  /** The overview endpoints' limit per key (events, webhooks, geofence writes, ...). */
  overviewRateLimit: { max: number; windowMs: number };
  /** Seconds between heartbeat comments on event streams. */
  eventStreamHeartbeatS: number;
  /** EVENT_STREAMS_PER_CREDENTIAL: event streams an API key or access token holds open at once (over every API process with Redis). */
  eventStreamsPerCredential: number;
  /** EVENT_STREAM_MAX_LIFE_S: a stream is closed this long after it opened, at the latest; the client resumes with Last-Event-ID. */
  eventStreamMaxLifeS: number;
  /** Notifications for people: channels (SMTP_URL, VAPID_*, TELEGRAM_*, SMS_*) and delivery (NOTIFICATION_*). */
  notifications: NotificationConfig;
  webhooks: {
    /** Let webhooks reach loopback, private and other reserved addresses (tests, closed networks). */
    allowPrivate: boolean;
    timeoutMs: number;
    concurrency: number;
    /** Requests of one account in flight at once per engine process: slow receivers hold their account's share only. */
    accountConcurrency: number;
    maxConsecutiveFailures: number;
    deliveryRetentionMs: number;
    /** Webhooks one user may have in one mode. */
    perUser: number;
  };
  /** Events older than this are deleted from the log. */
  eventsRetentionMs: number;
  /** MEDIA_MAX_BYTES: the largest tracker picture kept; MEDIA_RETENTION_DAYS (undefined: kept for ever, 0 in the setting). */
  media: { maxBytes: number; retentionMs: number | undefined };
  /** The position history's partitions (by fix time) and how long it is kept, in days (README, "History and retention"). */
  positionHistory: { retentionDays: number; partitionDays: number; aheadDays: number };
  bodyLimitBytes: number;
  deviceStatus: { inactiveAfterMinutes: number; movingSpeedKmh: number };
  onTimeToleranceMinutes: number;
  /** TCP port per tracker protocol; 0 disables that listener. */
  trackerPorts: Record<string, number>;
  /** HTTP port of the OsmAnd protocol (phone apps); 0 disables it. */
  osmandPort: number;
  /** METRICS_PORT: GET /metrics on a port of its own (and no longer on the API's); absent, on the API's port. */
  metricsPort: number | undefined;
  /** METRICS_TOKEN: GET /metrics asks scrapers for this bearer token; absent, it is open. */
  metricsToken: string | undefined;
  ingest: {
    idleTimeoutMs: number;
    maxBufferedBytes: number;
    /** A tracker connection that has not identified a registered device this long after it opened is closed. */
    loginTimeoutMs: number;
    /** Connections one address may hold, over every tracker port, that have not identified a device yet. */
    maxUnidentifiedPerAddress: number;
    batchRows: number;
    batchDelayMs: number;
    /** What the commit wait list holds at most while the database is slow or down. */
    maxWaitingRows: number;
    maxWaitingBytes: number;
    /** Connections each tracker listener (and the OsmAnd one) holds at once. */
    maxConnections: number;
    /** TRACKER_PROXY_PROTOCOL: every tracker connection opens with a PROXY protocol header (v1 or v2) naming the tracker. */
    proxyProtocol: boolean;
    /** TRACKER_PROXY_FROM: addresses and CIDR blocks of the proxies that may send it; empty, any peer may. */
    proxyFrom: string[];
  };
  /** Connections the HTTP API holds at once. */
  httpMaxConnections: number;
  /** Seed demo data into an empty database at start: `auto` does so only on the embedded default. */
  engine: {
    etaRefreshMs: number;
    inactivitySweepMs: number;
    /** MAINTENANCE_CHECK_S: how often maintenance items are checked for due and overdue. */
    maintenanceCheckMs: number;
    geofencePollMs: number;
    concurrency: number;
    /** ENGINE_QUEUES: the engine queues devices' signals are spread over, by device (every engine process works all of them). */
    queues: number;
    roadFactor: number;
    defaultSpeedKmh: number;
    /** Late fixes at most this far behind a device's cursor are evaluated. */
    lateWindowMs: number;
    /** A speeding stretch (one `vehicle.overspeed`) ends only below the speed limit minus this. */
    overspeedHysteresisKmh: number;
    /** GEOCODER_REUSE_DISTANCE_M: a vehicle that moved less than this from where its address was looked up keeps it. */
    addressReuseM: number;
    /** Trip and stop segmentation (README, "Trips and stops"); the moving speed is MOVING_SPEED_KMH. */
    trips: { useIgnition: boolean; minStopS: number; minDistanceM: number; minDurationS: number; maxGapS: number };
    /** Harsh driving and idling (HARSH_*, IDLE_MIN_S; docs/engine.md, "Driving behaviour"). */
    driving: DrivingSettings;
    /** Fuel refills and drops (FUEL_*; docs/engine.md, "Fuel"). */
    fuel: FuelThresholds;
    /** Late-fix entries the engine never came back for are kept this long. */
    lateFixesRetentionMs: number;
    geofenceChangesRetentionMs: number;
    pruneIntervalMs: number;
  };
  access: {
    /** PUBLIC_URL: the server's address as clients reach it (the OAuth issuer); by default each request's origin. */
    publicUrl: string | undefined;
    /** Seconds an OAuth access token lives. */
    tokenTtlS: number;
    /** 401s from one address within a minute before its failing requests are answered 429. */
    authFailureLimit: number;
    /** OAUTH_TOKEN_RATE_LIMIT: tokens one OAuth client may be issued a minute. */
    oauthTokenRateLimit: number;
    /** SESSION_IDLE_MINUTES (in ms): a sign-in session unused this long ends. */
    sessionIdleMs: number;
    /** SESSION_MAX_DAYS (in ms): a sign-in session ends this long after sign-in. */
    sessionMaxMs: number;
    /** SIGN_IN_FAILURE_LIMIT: failed sign-ins one email may have in a minute before sign-ins to it are answered 429. */
    signInFailureLimit: number;
    /** TRUST_PROXY: addresses and CIDR blocks of proxies whose X-Forwarded-For names the client. */
    trustProxy: string[];
  };
  commands: {
    /** COMMAND_SAFE_STOP_KMH: an engine stop waits while the vehicle's current fix is faster. */
    safeStopKmh: number;
    /** COMMAND_SAFE_STOP_MAX_FIX_AGE_S, in ms: an engine stop is judged only on a fix this recent, received on the current connection. */
    safeStopMaxFixAgeMs: number;
    /** A sent command unanswered this long is sent again, or fails on its last attempt. */
    answerTimeoutMs: number;
    /** Sends of a command before it fails, when the request names none. */
    maxAttempts: number;
    /** How often each ingest process looks at its connected devices' commands without being told. */
    sweepMs: number;
    /** How often commands past their time to live are marked expired. */
    expirySweepMs: number;
  };
  /** Addresses of points (docs/geocoding.md): GEOCODER and its GEOCODER_* settings. */
  geocoder: GeocoderSettings;
  /** MAP_TILE_URL with MAP_TILE_ATTRIBUTION: a tile server the live map draws under its graticule; absent, the map is offline. */
  mapTiles: MapTiles | undefined;
  demoSeed: 'auto' | 'true' | 'false';
  /** Drive the demo vehicles with simulated trackers: `auto` does so on the embedded default when demo data exists. */
  demoSimulate: 'auto' | 'true' | 'false';
}



/** Tracker pictures: at most 64 MiB each (a camera's are tens to hundreds of KiB), kept 90 days by default, 0 for ever. */
function media(env: Env): Config['media'] {
  const retentionDays = integer(env, 'MEDIA_RETENTION_DAYS', 90, 0, 36500);
  return {
    maxBytes: integer(env, 'MEDIA_MAX_BYTES', 5 * 1024 * 1024, 1024, 64 * 1024 * 1024),
    retentionMs: retentionDays === 0 ? undefined : retentionDays * 86_400_000,
  };
}


function positiveNumber(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new StartupError(`${name} must be a positive number, got "${raw}"`);
  return value;
}

/** A harsh-driving threshold in m/s²: above MAX_PLAUSIBLE_MS2 every such figure is taken for a GPS glitch, so none would count. */
function harshThreshold(env: Env, name: string, fallback: number): number {
  const value = positiveNumber(env, name, fallback);
  if (value > MAX_PLAUSIBLE_MS2) throw new StartupError(`${name} must be at most ${MAX_PLAUSIBLE_MS2} m/s² (1.2 g), got "${env[name]}"`);
  return value;
}

/** A fuel threshold in percentage points of the tank: above 0 (noise would fire) and below 100. */
function percentagePoints(env: Env, name: string, fallback: number): number {
  const value = positiveNumber(env, name, fallback);
  if (value >= 100) throw new StartupError(`${name} must be below 100 (percentage points of the tank), got "${env[name]}"`);
  return value;
}

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new StartupError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new StartupError(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}`);
  }
  return raw;
}

function autoFlag(name: string, raw: string | undefined): 'auto' | 'true' | 'false' {
  const value = raw || 'auto';
  if (value !== 'auto' && value !== 'true' && value !== 'false') throw new StartupError(`${name} must be auto, true or false, got "${raw}"`);
  return value;
}

/** TRUST_PROXY or TRACKER_PROXY_FROM as a list, each entry checked now rather than on the first connection. */
function proxyList(env: Env, name: string): string[] {
  const entries = (env[name] ?? '').split(',').map((e) => e.trim()).filter(Boolean);
  try {
    new TrustedProxies(entries);
  } catch (error) {
    if (error instanceof TrustedProxyListError) throw new StartupError(`${name}: ${error.message}; give addresses and CIDR blocks, comma-separated`);
    throw error;
  }
  return entries;
}

/** TRACKER_PROXY_PROTOCOL and TRACKER_PROXY_FROM, which means nothing without it. */
function trackerProxy(env: Env): { proxyProtocol: boolean; proxyFrom: string[] } {
  const proxyProtocol = flag(env, 'TRACKER_PROXY_PROTOCOL', false);
  const proxyFrom = proxyList(env, 'TRACKER_PROXY_FROM');
  if (proxyFrom.length > 0 && !proxyProtocol) throw new StartupError('TRACKER_PROXY_FROM is set without TRACKER_PROXY_PROTOCOL=true; set both, or neither');
  return { proxyProtocol, proxyFrom };
}

const TILE_EXAMPLE = 'e.g. https://tile.example.com/{z}/{x}/{y}.png';

/**
 * MAP_TILE_URL and MAP_TILE_ATTRIBUTION, checked now: the page's Content-Security-Policy allows
 * images from the template's one origin, and every visitor's browser sees the template.
 */
function mapTiles(env: Env): MapTiles | undefined {
  const raw = env.MAP_TILE_URL ?? '';
  const attribution = (env.MAP_TILE_ATTRIBUTION ?? '').trim();
  if (raw === '') {
    if (attribution) throw new StartupError('MAP_TILE_ATTRIBUTION is set without MAP_TILE_URL; set both, or neither for the offline map');
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new StartupError(`MAP_TILE_URL is not a valid URL (${TILE_EXAMPLE})`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new StartupError('MAP_TILE_URL must start with http:// or https://');
  if (/[{}]/.test(parsed.host)) throw new StartupError(`MAP_TILE_URL must name one host, without {s} subdomains (${TILE_EXAMPLE})`);
  if (parsed.username || parsed.password) throw new StartupError('MAP_TILE_URL must not hold a user or password: every visitor of the map sees it');
  const missing = ['{z}', '{x}', '{y}'].filter((p) => !raw.includes(p));
  if (missing.length > 0) throw new StartupError(`MAP_TILE_URL must contain {z}, {x} and {y}, lacks ${missing.join(', ')} (${TILE_EXAMPLE})`);
  if (!attribution) throw new StartupError('MAP_TILE_ATTRIBUTION is required with MAP_TILE_URL: the text the tile server\'s terms ask the map to show, e.g. "© OpenStreetMap contributors"');
  if (attribution.length > 300) throw new StartupError(`MAP_TILE_ATTRIBUTION must be at most 300 characters, got ${attribution.length}`);
  return { url: raw, attribution };
}

/** A scrape token short enough to guess is refused at start rather than trusted. */
function metricsToken(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 16 || /\s/.test(raw)) throw new StartupError('METRICS_TOKEN must be at least 16 characters, without spaces');
  return raw;
}


/** Partitions of POSITIONS_PARTITION_DAYS, made POSITIONS_PARTITIONS_AHEAD_DAYS ahead, dropped past POSITIONS_RETENTION_DAYS. */
function positionHistory(env: Env): Config['positionHistory'] {
  const retentionDays = integer(env, 'POSITIONS_RETENTION_DAYS', 90, 1, 36500);
  const partitionDays = integer(env, 'POSITIONS_PARTITION_DAYS', 1, 1, 31);
  const aheadDays = integer(env, 'POSITIONS_PARTITIONS_AHEAD_DAYS', 7, 1, 365);
  // A partition goes only once all of it is past the retention: wider than the retention, it would keep fixes twice as long.
  if (partitionDays > retentionDays) {
    throw new StartupError(`POSITIONS_PARTITION_DAYS (${partitionDays}) must not exceed POSITIONS_RETENTION_DAYS (${retentionDays})`);
  }
  return { retentionDays, partitionDays, aheadDays };
}

/** WEBHOOK_ACCOUNT_CONCURRENCY: 8 unless given (or WEBHOOK_CONCURRENCY if that is less), and never more than WEBHOOK_CONCURRENCY. */
function webhookAccountConcurrency(env: Env): number {
  const concurrency = integer(env, 'WEBHOOK_CONCURRENCY', WEBHOOK_CONCURRENCY_DEFAULT, 1, 1000);
  const perAccount = integer(env, 'WEBHOOK_ACCOUNT_CONCURRENCY', accountInFlight(concurrency), 1, 1000);
  if (perAccount > concurrency) {
    throw new StartupError(`WEBHOOK_ACCOUNT_CONCURRENCY (${perAccount}) must not exceed WEBHOOK_CONCURRENCY (${concurrency})`);
  }
  return perAccount;
}

const GEOCODERS: readonly GeocoderSettings['provider'][] = ['offline', 'nominatim', 'photon', 'pelias', 'off'];

/** GEOCODER and its settings: an online provider needs GEOCODER_URL, and the public Nominatim its policy's one request a second. */
function geocoder(env: Env): GeocoderSettings {
  const provider = (env.GEOCODER || 'offline') as GeocoderSettings['provider'];
  if (!GEOCODERS.includes(provider)) throw new StartupError(`GEOCODER must be one of ${GEOCODERS.join(', ')}, got "${env.GEOCODER}"`);
  const providerUrl = url(env, 'GEOCODER_URL', ['http:', 'https:']);
  const online = provider !== 'offline' && provider !== 'off';
  if (online && !providerUrl) throw new StartupError(`GEOCODER=${provider} needs GEOCODER_URL, the provider's base URL`);
  const requestsPerSecond = positiveNumber(env, 'GEOCODER_RATE_PER_S', 1);
  if (provider === 'nominatim' && new URL(providerUrl!).hostname === 'nominatim.openstreetmap.org' && requestsPerSecond > 1) {
    throw new StartupError('GEOCODER_RATE_PER_S must be at most 1 for nominatim.openstreetmap.org (its usage policy); run your own Nominatim for more');
  }
  return {
    provider,
    ...(providerUrl ? { url: providerUrl } : {}),
    ...(env.GEOCODER_KEY ? { key: env.GEOCODER_KEY } : {}),
    timeoutMs: integer(env, 'GEOCODER_TIMEOUT_MS', 3000, 100, 60_000),
    requestsPerSecond,
    cacheSize: integer(env, 'GEOCODER_CACHE_SIZE', 10_000, 0, 10_000_000),
  };
}

/** DATABASE_READ_URL: a replica of DATABASE_URL's PostgreSQL; the embedded database has none. */
function readDatabaseUrl(env: Env): string | undefined {
  const readUrl = url(env, 'DATABASE_READ_URL', ['postgres:', 'postgresql:']);
  if (readUrl && !env.DATABASE_URL) throw new StartupError('DATABASE_READ_URL is set without DATABASE_URL; a read replica needs its primary at DATABASE_URL');
  return readUrl;
}

/** DATABASE_POOL_MODE: session (the default) or transaction, as the pooler at DATABASE_URL runs. */
function databasePoolMode(env: Env): PoolMode {
  const mode = (env.DATABASE_POOL_MODE || 'session') as PoolMode;
  if (!POOL_MODES.includes(mode)) throw new StartupError(`DATABASE_POOL_MODE must be one of ${POOL_MODES.join(', ')} (PgBouncer's pool_mode), got "${env.DATABASE_POOL_MODE}"`);
  if (mode === 'transaction' && !env.DATABASE_URL) throw new StartupError('DATABASE_POOL_MODE=transaction is set without DATABASE_URL; it describes the pooler at DATABASE_URL');
  return mode;
}

/** DATABASE_LISTEN_URL: the same database as DATABASE_URL, reached without a transaction pooler. */
function listenDatabaseUrl(env: Env): string | undefined {
  const listenUrl = url(env, 'DATABASE_LISTEN_URL', ['postgres:', 'postgresql:']);
  if (listenUrl && !env.DATABASE_URL) throw new StartupError('DATABASE_LISTEN_URL is set without DATABASE_URL; it is a second way to DATABASE_URL\'s database');
  return listenUrl;
}

/** Reads the configuration from environment variables; every variable is documented in the README. */
export function loadConfig(env: Env = process.env): Config {
  const logLevel = (env.LOG_LEVEL || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new StartupError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  }
  return {
    host: env.HOST || '0.0.0.0',
    port: integer(env, 'PORT', 3000, 0, 65535),
    dataDir: resolve(env.DATA_DIR || './data'),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    readDatabaseUrl: readDatabaseUrl(env),
    readReplicaMaxLagMs: integer(env, 'READ_REPLICA_MAX_LAG_MS', DEFAULT_READ_REPLICA_MAX_LAG_MS, 100, 3_600_000),
    databasePoolMode: databasePoolMode(env),
    listenDatabaseUrl: listenDatabaseUrl(env),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisCluster: redisClusterSettings(env),
    logLevel,
    rateLimit: {
      max: integer(env, 'RATE_LIMIT_MAX', 50, 1, 1_000_000),
      windowMs: integer(env, 'RATE_LIMIT_WINDOW_MS', 10_000, 100, 3_600_000),
    },
    overviewRateLimit: {
      max: integer(env, 'OVERVIEW_RATE_LIMIT_MAX', 600, 1, 1_000_000),
      windowMs: integer(env, 'OVERVIEW_RATE_LIMIT_WINDOW_MS', 60_000, 100, 3_600_000),
    },
    eventStreamHeartbeatS: integer(env, 'EVENT_STREAM_HEARTBEAT_S', 15, 1, 15),
    eventStreamsPerCredential: integer(env, 'EVENT_STREAMS_PER_CREDENTIAL', 10, 1, 10_000),
    eventStreamMaxLifeS: integer(env, 'EVENT_STREAM_MAX_LIFE_S', 86_400, 60, 7 * 86_400),
    webhooks: {
      allowPrivate: flag(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 60_000),
      concurrency: integer(env, 'WEBHOOK_CONCURRENCY', WEBHOOK_CONCURRENCY_DEFAULT, 1, 1000),
      accountConcurrency: webhookAccountConcurrency(env),
      maxConsecutiveFailures: integer(env, 'WEBHOOK_MAX_CONSECUTIVE_FAILURES', 20, 1, 100_000),
      deliveryRetentionMs: integer(env, 'WEBHOOK_DELIVERY_RETENTION_DAYS', 30, 1, 3650) * 86_400_000,
      perUser: integer(env, 'WEBHOOKS_PER_USER', 20, 1, 10_000),
    },
    notifications: notificationConfig(env, { allowPrivate: flag(env, 'WEBHOOK_ALLOW_PRIVATE', false) }),
    eventsRetentionMs: integer(env, 'EVENTS_RETENTION_DAYS', 90, 7, 36500) * 86_400_000,
    media: media(env),
    positionHistory: positionHistory(env),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 256 * 1024, 1024, 64 * 1024 * 1024),
    deviceStatus: {
      inactiveAfterMinutes: positiveNumber(env, 'INACTIVE_AFTER_MINUTES', 30),
      movingSpeedKmh: positiveNumber(env, 'MOVING_SPEED_KMH', 5),
    },
    onTimeToleranceMinutes: integer(env, 'ON_TIME_TOLERANCE_MINUTES', 5, 0, 1440),
    trackerPorts: Object.fromEntries(
      TRACKER_PROTOCOLS.map(({ protocol, portVariable }) => [protocol.name, integer(env, portVariable, protocol.defaultPort, 0, 65535)]),
    ),
    osmandPort: integer(env, 'OSMAND_PORT', 5055, 0, 65535),
    metricsPort: env.METRICS_PORT ? integer(env, 'METRICS_PORT', 9464, 0, 65535) : undefined,
    metricsToken: metricsToken(env.METRICS_TOKEN),
    ingest: {
      idleTimeoutMs: integer(env, 'TRACKER_IDLE_TIMEOUT_S', 600, 10, 86_400) * 1000,
      maxBufferedBytes: integer(env, 'TRACKER_MAX_BUFFERED_BYTES', 1024 * 1024, 4096, 64 * 1024 * 1024),
      loginTimeoutMs: integer(env, 'TRACKER_LOGIN_TIMEOUT_S', DEFAULT_LOGIN_TIMEOUT_MS / 1000, 1, 3600) * 1000,
      maxUnidentifiedPerAddress: integer(env, 'TRACKER_MAX_UNIDENTIFIED_PER_ADDRESS', DEFAULT_MAX_UNIDENTIFIED_PER_ADDRESS, 1, 1_000_000),
      batchRows: integer(env, 'INGEST_BATCH_ROWS', 1000, 1, 100_000),
      batchDelayMs: integer(env, 'INGEST_BATCH_DELAY_MS', 5, 0, 1000),
      maxWaitingRows: integer(env, 'INGEST_MAX_WAITING_ROWS', DEFAULT_MAX_WAITING_ROWS, 1, 100_000_000),
      maxWaitingBytes: integer(env, 'INGEST_MAX_WAITING_BYTES', DEFAULT_MAX_WAITING_BYTES, 1024 * 1024, 64 * 1024 * 1024 * 1024),
      maxConnections: integer(env, 'TRACKER_MAX_CONNECTIONS', defaultMaxConnections(), 1, 10_000_000),
      ...trackerProxy(env),
    },
    httpMaxConnections: integer(env, 'HTTP_MAX_CONNECTIONS', defaultMaxConnections(), 1, 10_000_000),
    engine: {
      etaRefreshMs: integer(env, 'ETA_REFRESH_S', 30, 1, 3600) * 1000,
      inactivitySweepMs: integer(env, 'INACTIVITY_SWEEP_S', 60, 1, 3600) * 1000,
      maintenanceCheckMs: integer(env, 'MAINTENANCE_CHECK_S', 60, 1, 86_400) * 1000,
      geofencePollMs: integer(env, 'GEOFENCE_POLL_MS', 500, 50, 60_000),
      concurrency: integer(env, 'ENGINE_CONCURRENCY', 2, 1, 64),
      queues: integer(env, 'ENGINE_QUEUES', 1, 1, MAX_ENGINE_QUEUES),
      roadFactor: positiveNumber(env, 'ETA_ROAD_FACTOR', 1.3),
      defaultSpeedKmh: positiveNumber(env, 'ETA_DEFAULT_SPEED_KMH', 40),
      lateWindowMs: integer(env, 'ENGINE_LATE_WINDOW_S', 3600, 0, 7 * 86_400) * 1000,
      overspeedHysteresisKmh: integer(env, 'OVERSPEED_HYSTERESIS_KMH', 5, 0, 100),
      addressReuseM: integer(env, 'GEOCODER_REUSE_DISTANCE_M', 100, 0, 100_000),
      trips: {
        useIgnition: flag(env, 'TRIPS_USE_IGNITION', false),
        minStopS: integer(env, 'TRIP_MIN_STOP_S', 300, 1, 86_400),
        minDistanceM: integer(env, 'TRIP_MIN_DISTANCE_M', 200, 0, 1_000_000),
        minDurationS: integer(env, 'TRIP_MIN_DURATION_S', 180, 0, 86_400),
        maxGapS: integer(env, 'TRIP_MAX_GAP_S', 3600, 60, 7 * 86_400),
      },
      driving: {
        harsh: {
          accelerationMs2: harshThreshold(env, 'HARSH_ACCELERATION_MS2', 2.5),
          brakingMs2: harshThreshold(env, 'HARSH_BRAKING_MS2', 3),
          corneringMs2: harshThreshold(env, 'HARSH_CORNERING_MS2', 3),
          corneringMinSpeedKmh: integer(env, 'HARSH_CORNERING_MIN_SPEED_KMH', 20, 0, 300),
          maxGapS: integer(env, 'HARSH_MAX_GAP_S', 10, 1, 600),
          sameEventS: integer(env, 'HARSH_SAME_EVENT_S', 5, 0, 3600),
        },
        idleMinS: integer(env, 'IDLE_MIN_S', 300, 10, 86_400),
      },
      fuel: {
        refillMinPercent: percentagePoints(env, 'FUEL_REFILL_MIN_PERCENT', 10),
        dropMinPercent: percentagePoints(env, 'FUEL_DROP_MIN_PERCENT', 8),
      },
      lateFixesRetentionMs: integer(env, 'LATE_FIXES_RETENTION_DAYS', 7, 1, 3650) * 86_400_000,
      geofenceChangesRetentionMs: integer(env, 'GEOFENCE_CHANGES_RETENTION_HOURS', 24, 1, 24 * 365) * 3_600_000,
      pruneIntervalMs: integer(env, 'PRUNE_INTERVAL_S', 3600, 10, 86_400) * 1000,
    },
    access: {
      publicUrl: url(env, 'PUBLIC_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
      tokenTtlS: integer(env, 'OAUTH_TOKEN_TTL_S', 3600, 60, 86_400),
      authFailureLimit: integer(env, 'AUTH_FAILURE_LIMIT', 20, 1, 100_000),
      oauthTokenRateLimit: integer(env, 'OAUTH_TOKEN_RATE_LIMIT', 30, 1, 100_000),
      sessionIdleMs: integer(env, 'SESSION_IDLE_MINUTES', 720, 1, 525_600) * 60_000,
      sessionMaxMs: integer(env, 'SESSION_MAX_DAYS', 30, 1, 365) * 86_400_000,
      signInFailureLimit: integer(env, 'SIGN_IN_FAILURE_LIMIT', 5, 1, 1000),
      trustProxy: proxyList(env, 'TRUST_PROXY'),
    },
    commands: {
      safeStopKmh: integer(env, 'COMMAND_SAFE_STOP_KMH', 20, 0, 1000),
      safeStopMaxFixAgeMs: integer(env, 'COMMAND_SAFE_STOP_MAX_FIX_AGE_S', 60, 5, 3600) * 1000,
      answerTimeoutMs: integer(env, 'COMMAND_ANSWER_TIMEOUT_S', 30, 1, 3600) * 1000,
      maxAttempts: integer(env, 'COMMAND_MAX_ATTEMPTS', 3, 1, 10),
      sweepMs: integer(env, 'COMMAND_SWEEP_S', 5, 1, 3600) * 1000,
      expirySweepMs: integer(env, 'COMMAND_EXPIRY_SWEEP_S', 5, 1, 3600) * 1000,
    },
    geocoder: geocoder(env),
    mapTiles: mapTiles(env),
    demoSeed: autoFlag('DEMO_SEED', env.DEMO_SEED),
    demoSimulate: autoFlag('DEMO_SIMULATE', env.DEMO_SIMULATE),
  };
}
