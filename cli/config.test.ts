import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../runtime/redact-url.ts';
import { defaultMaxConnections } from '../runtime/file-descriptor-limit.ts';
import { loadConfig } from './config.ts';
import { StartupError } from '../runtime/startup-error.ts';

/** The StartupError message loading `env` throws; fails the test when it throws nothing or something else. */
function startupErrorOf(env: Record<string, string | undefined>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(StartupError);
    const message = (error as Error).message;
    // One clear line: no stack, no line breaks, nothing nested.
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error(`expected a StartupError for ${JSON.stringify(env)}, nothing was thrown`);
}

describe('loadConfig', () => {
  it('has defaults for everything', () => {
    expect(loadConfig({})).toEqual({
      host: '0.0.0.0',
      port: 3000,
      dataDir: resolve('./data'),
      databaseUrl: undefined,
      readDatabaseUrl: undefined,
      readReplicaMaxLagMs: 5000,
      databasePoolMode: 'session',
      listenDatabaseUrl: undefined,
      redisUrl: undefined,
      logLevel: 'info',
      rateLimit: { max: 50, windowMs: 10_000 },
      overviewRateLimit: { max: 600, windowMs: 60_000 },
      eventStreamHeartbeatS: 15,
      eventStreamsPerCredential: 10,
      eventStreamMaxLifeS: 86_400,
      webhooks: { allowPrivate: false, timeoutMs: 15_000, concurrency: 128, accountConcurrency: 8, maxConsecutiveFailures: 20, deliveryRetentionMs: 30 * 86_400_000, perUser: 20 },
      // Every channel off until configured.
      notifications: { retryDelaysMs: [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000], timeoutMs: 15_000, concurrency: 16, deliveryRetentionMs: 30 * 86_400_000, reportCheckMs: 60_000 },
      eventsRetentionMs: 90 * 86_400_000,
      media: { maxBytes: 5 * 1024 * 1024, retentionMs: 90 * 86_400_000 },
      positionHistory: { retentionDays: 90, partitionDays: 1, aheadDays: 7 },
      bodyLimitBytes: 256 * 1024,
      deviceStatus: { inactiveAfterMinutes: 30, movingSpeedKmh: 5 },
      onTimeToleranceMinutes: 5,
      trackerPorts: { teltonika: 5027, gt06: 5023, h02: 5013, gl200: 5004, meitrack: 5020, tk103: 5002, jt808: 5015, gps103: 5001, wialon: 5039, suntech: 5011, ruptela: 5046, watch: 5093 },
      osmandPort: 5055,
      ingest: {
        idleTimeoutMs: 600_000, maxBufferedBytes: 1024 * 1024, loginTimeoutMs: 30_000, maxUnidentifiedPerAddress: 64, batchRows: 1000, batchDelayMs: 5,
        maxWaitingRows: 100_000, maxWaitingBytes: 128 * 1024 * 1024, maxConnections: defaultMaxConnections(), proxyProtocol: false, proxyFrom: [],
      },
      httpMaxConnections: defaultMaxConnections(),
      engine: {
        etaRefreshMs: 30_000, inactivitySweepMs: 60_000, maintenanceCheckMs: 60_000, geofencePollMs: 500, concurrency: 2, queues: 1, roadFactor: 1.3, defaultSpeedKmh: 40,
        lateWindowMs: 3_600_000, lateFixesRetentionMs: 7 * 86_400_000, geofenceChangesRetentionMs: 86_400_000, pruneIntervalMs: 3_600_000,
        overspeedHysteresisKmh: 5,
        addressReuseM: 100,
        trips: { useIgnition: false, minStopS: 300, minDistanceM: 200, minDurationS: 180, maxGapS: 3600 },
        driving: {
          harsh: { accelerationMs2: 2.5, brakingMs2: 3, corneringMs2: 3, corneringMinSpeedKmh: 20, maxGapS: 10, sameEventS: 5 },
          idleMinS: 300,
        },
        fuel: { refillMinPercent: 10, dropMinPercent: 8 },
      },
      access: {
        publicUrl: undefined, tokenTtlS: 3600, authFailureLimit: 20, oauthTokenRateLimit: 30, trustProxy: [],
        sessionIdleMs: 720 * 60_000, sessionMaxMs: 30 * 86_400_000, signInFailureLimit: 5,
      },
      commands: { safeStopKmh: 20, safeStopMaxFixAgeMs: 60_000, answerTimeoutMs: 30_000, maxAttempts: 3, sweepMs: 5_000, expirySweepMs: 5_000 },
      geocoder: { provider: 'offline', timeoutMs: 3000, requestsPerSecond: 1, cacheSize: 10_000 },
      demoSeed: 'auto',
      demoSimulate: 'auto',
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      HOST: '127.0.0.1',
      PORT: '8080',
      DATA_DIR: '/var/lib/fleet',
      DATABASE_URL: 'postgresql://fleet:pw@db:5432/fleet',
      REDIS_URL: 'rediss://cache:6380',
      LOG_LEVEL: 'debug',
      RATE_LIMIT_MAX: '10',
      RATE_LIMIT_WINDOW_MS: '1000',
      OVERVIEW_RATE_LIMIT_MAX: '100',
      OVERVIEW_RATE_LIMIT_WINDOW_MS: '30000',
      EVENT_STREAM_HEARTBEAT_S: '5',
      EVENT_STREAMS_PER_CREDENTIAL: '3',
      EVENT_STREAM_MAX_LIFE_S: '3600',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_TIMEOUT_MS: '5000',
      WEBHOOK_CONCURRENCY: '8',
      WEBHOOK_ACCOUNT_CONCURRENCY: '3',
      WEBHOOK_MAX_CONSECUTIVE_FAILURES: '3',
      WEBHOOK_DELIVERY_RETENTION_DAYS: '10',
      WEBHOOKS_PER_USER: '5',
      SMTP_URL: 'smtp://fleet:pw@mail.example.com:587',
      SMTP_FROM: 'Fleet <fleet@example.com>',
      TELEGRAM_BOT_TOKEN: '123:abc',
      SMS_URL: 'https://sms.example.com/send?to={phone}&text={message}',
      NOTIFICATION_RETRY_S: '5,50',
      NOTIFICATION_TIMEOUT_MS: '2000',
      NOTIFICATION_CONCURRENCY: '4',
      NOTIFICATION_DELIVERY_RETENTION_DAYS: '7',
      REPORT_CHECK_S: '30',
      EVENTS_RETENTION_DAYS: '30',
      MEDIA_MAX_BYTES: '1048576',
      MEDIA_RETENTION_DAYS: '0',
      POSITIONS_RETENTION_DAYS: '365',
      POSITIONS_PARTITION_DAYS: '7',
      POSITIONS_PARTITIONS_AHEAD_DAYS: '14',
      BODY_LIMIT_BYTES: '2048',
      INACTIVE_AFTER_MINUTES: '15',
      MOVING_SPEED_KMH: '2.5',
      ON_TIME_TOLERANCE_MINUTES: '0',
      TELTONIKA_PORT: '15027',
      GT06_PORT: '0',
      H02_PORT: '15013',
      GL200_PORT: '15004',
      MEITRACK_PORT: '15020',
      TK103_PORT: '15002',
      GPS103_PORT: '15001',
      WIALON_PORT: '15039',
      SUNTECH_PORT: '15011',
      RUPTELA_PORT: '15046',
      WATCH_PORT: '15093',
      JT808_PORT: '15015',
      OSMAND_PORT: '15055',
      TRACKER_IDLE_TIMEOUT_S: '60',
      TRACKER_MAX_BUFFERED_BYTES: '65536',
      TRACKER_LOGIN_TIMEOUT_S: '10',
      TRACKER_MAX_UNIDENTIFIED_PER_ADDRESS: '500',
      INGEST_BATCH_ROWS: '500',
      INGEST_BATCH_DELAY_MS: '2',
      INGEST_MAX_WAITING_ROWS: '5000',
      INGEST_MAX_WAITING_BYTES: '2097152',
      TRACKER_MAX_CONNECTIONS: '900',
      HTTP_MAX_CONNECTIONS: '300',
      ENGINE_LATE_WINDOW_S: '600',
      LATE_FIXES_RETENTION_DAYS: '30',
      GEOFENCE_CHANGES_RETENTION_HOURS: '48',
      PRUNE_INTERVAL_S: '600',
      PUBLIC_URL: 'https://fleet.example.com/',
      OAUTH_TOKEN_TTL_S: '900',
      AUTH_FAILURE_LIMIT: '50',
      OAUTH_TOKEN_RATE_LIMIT: '5',
      SESSION_IDLE_MINUTES: '60',
      SESSION_MAX_DAYS: '7',
      SIGN_IN_FAILURE_LIMIT: '3',
      TRUST_PROXY: ' 10.0.0.0/8, ::1 ',
      TRACKER_PROXY_PROTOCOL: 'true',
      TRACKER_PROXY_FROM: '192.0.2.10, 2001:db8:1::/48',
      COMMAND_SAFE_STOP_KMH: '15',
      COMMAND_SAFE_STOP_MAX_FIX_AGE_S: '30',
      COMMAND_ANSWER_TIMEOUT_S: '45',
      COMMAND_MAX_ATTEMPTS: '5',
      COMMAND_SWEEP_S: '10',
      COMMAND_EXPIRY_SWEEP_S: '2',
      OVERSPEED_HYSTERESIS_KMH: '0',
      GEOCODER_REUSE_DISTANCE_M: '250',
      TRIPS_USE_IGNITION: 'true',
      TRIP_MIN_STOP_S: '120',
      TRIP_MIN_DISTANCE_M: '50',
      TRIP_MIN_DURATION_S: '60',
      TRIP_MAX_GAP_S: '900',
      DEMO_SEED: 'true',
      GEOCODER: 'pelias',
      GEOCODER_URL: 'https://api.geocode.earth',
      GEOCODER_KEY: 'ge-123',
      GEOCODER_TIMEOUT_MS: '1500',
      GEOCODER_RATE_PER_S: '10',
      GEOCODER_CACHE_SIZE: '500',
      ETA_REFRESH_S: '10',
      INACTIVITY_SWEEP_S: '15',
      HARSH_ACCELERATION_MS2: '2.8',
      HARSH_BRAKING_MS2: '3.5',
      HARSH_CORNERING_MS2: '4',
      HARSH_CORNERING_MIN_SPEED_KMH: '25',
      HARSH_MAX_GAP_S: '5',
      HARSH_SAME_EVENT_S: '3',
      IDLE_MIN_S: '600',
      FUEL_REFILL_MIN_PERCENT: '15',
      FUEL_DROP_MIN_PERCENT: '5.5',
      MAINTENANCE_CHECK_S: '120',
      GEOFENCE_POLL_MS: '250',
      ENGINE_CONCURRENCY: '4',
      ENGINE_QUEUES: '3',
      ETA_ROAD_FACTOR: '1.5',
      ETA_DEFAULT_SPEED_KMH: '30',
      DEMO_SIMULATE: 'false',
    });
    expect(config).toEqual({
      host: '127.0.0.1',
      port: 8080,
      dataDir: '/var/lib/fleet',
      databaseUrl: 'postgresql://fleet:pw@db:5432/fleet',
      readDatabaseUrl: undefined,
      readReplicaMaxLagMs: 5000,
      databasePoolMode: 'session',
      listenDatabaseUrl: undefined,
      redisUrl: 'rediss://cache:6380',
      logLevel: 'debug',
      rateLimit: { max: 10, windowMs: 1000 },
      overviewRateLimit: { max: 100, windowMs: 30_000 },
      eventStreamHeartbeatS: 5,
      eventStreamsPerCredential: 3,
      eventStreamMaxLifeS: 3600,
      webhooks: { allowPrivate: true, timeoutMs: 5_000, concurrency: 8, accountConcurrency: 3, maxConsecutiveFailures: 3, deliveryRetentionMs: 10 * 86_400_000, perUser: 5 },
      notifications: {
        email: { url: 'smtp://fleet:pw@mail.example.com:587', from: 'Fleet <fleet@example.com>', requireTls: false },
        telegram: { token: '123:abc', apiUrl: 'https://api.telegram.org' },
        sms: { url: 'https://sms.example.com/send?to={phone}&text={message}', contentType: 'application/x-www-form-urlencoded' },
        retryDelaysMs: [5_000, 50_000], timeoutMs: 2_000, concurrency: 4, deliveryRetentionMs: 7 * 86_400_000, reportCheckMs: 30_000,
      },
      eventsRetentionMs: 30 * 86_400_000,
      media: { maxBytes: 1_048_576, retentionMs: undefined },
      positionHistory: { retentionDays: 365, partitionDays: 7, aheadDays: 14 },
      bodyLimitBytes: 2048,
      deviceStatus: { inactiveAfterMinutes: 15, movingSpeedKmh: 2.5 },
      onTimeToleranceMinutes: 0,
      trackerPorts: { teltonika: 15027, gt06: 0, h02: 15013, gl200: 15004, meitrack: 15020, tk103: 15002, jt808: 15015, gps103: 15001, wialon: 15039, suntech: 15011, ruptela: 15046, watch: 15093 },
      osmandPort: 15055,
      ingest: {
        idleTimeoutMs: 60_000, maxBufferedBytes: 65536, loginTimeoutMs: 10_000, maxUnidentifiedPerAddress: 500, batchRows: 500, batchDelayMs: 2, maxWaitingRows: 5000, maxWaitingBytes: 2097152, maxConnections: 900,
        proxyProtocol: true, proxyFrom: ['192.0.2.10', '2001:db8:1::/48'],
      },
      httpMaxConnections: 300,
      engine: {
        etaRefreshMs: 10_000, inactivitySweepMs: 15_000, maintenanceCheckMs: 120_000, geofencePollMs: 250, concurrency: 4, queues: 3, roadFactor: 1.5, defaultSpeedKmh: 30,
        lateWindowMs: 600_000, lateFixesRetentionMs: 30 * 86_400_000, geofenceChangesRetentionMs: 48 * 3_600_000, pruneIntervalMs: 600_000,
        overspeedHysteresisKmh: 0,
        addressReuseM: 250,
        trips: { useIgnition: true, minStopS: 120, minDistanceM: 50, minDurationS: 60, maxGapS: 900 },
        driving: {
          harsh: { accelerationMs2: 2.8, brakingMs2: 3.5, corneringMs2: 4, corneringMinSpeedKmh: 25, maxGapS: 5, sameEventS: 3 },
          idleMinS: 600,
        },
        fuel: { refillMinPercent: 15, dropMinPercent: 5.5 },
      },
      access: {
        publicUrl: 'https://fleet.example.com', tokenTtlS: 900, authFailureLimit: 50, oauthTokenRateLimit: 5, trustProxy: ['10.0.0.0/8', '::1'],
        sessionIdleMs: 3_600_000, sessionMaxMs: 7 * 86_400_000, signInFailureLimit: 3,
      },
      commands: { safeStopKmh: 15, safeStopMaxFixAgeMs: 30_000, answerTimeoutMs: 45_000, maxAttempts: 5, sweepMs: 10_000, expirySweepMs: 2_000 },
      geocoder: { provider: 'pelias', url: 'https://api.geocode.earth', key: 'ge-123', timeoutMs: 1500, requestsPerSecond: 10, cacheSize: 500 },
      demoSeed: 'true',
      demoSimulate: 'false',
    });
  });

  it('treats empty variables as unset', () => {
    const config = loadConfig({ HOST: '', PORT: '', DATA_DIR: '', DATABASE_URL: '', REDIS_URL: '', DEMO_SEED: '' });
    expect(config).toMatchObject({ host: '0.0.0.0', port: 3000, dataDir: resolve('./data'), databaseUrl: undefined, redisUrl: undefined, demoSeed: 'auto' });
  });

  it('treats an empty LOG_LEVEL as unset, like every other variable', () => {
    // e.g. docker compose `LOG_LEVEL: ${LOG_LEVEL}` with nothing set in the shell.
    expect(loadConfig({ LOG_LEVEL: '' }).logLevel).toBe('info');
  });

  it('accepts PORT 0 (any free port) and 65535', () => {
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
    expect(loadConfig({ PORT: '65535' }).port).toBe(65535);
  });

  it('rejects a PORT that is not an integer from 0 to 65535', () => {
    for (const port of ['65536', '-1', 'http', '80.5', '3000abc']) {
      expect(startupErrorOf({ PORT: port })).toBe(`PORT must be an integer from 0 to 65535, got "${port}"`);
    }
  });

  it('takes METRICS_PORT and a METRICS_TOKEN long enough not to be guessed', () => {
    expect(loadConfig({}).metricsPort).toBeUndefined();
    expect(loadConfig({}).metricsToken).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_TOKEN: 'a-scrape-token-of-24chars' })).toMatchObject({ metricsPort: 9464, metricsToken: 'a-scrape-token-of-24chars' });
    for (const token of ['short', 'has spaces in the token']) {
      expect(startupErrorOf({ METRICS_TOKEN: token })).toBe('METRICS_TOKEN must be at least 16 characters, without spaces');
    }
  });

  it('rejects a TRUST_PROXY entry that is not an address or a CIDR block, naming it', () => {
    expect(startupErrorOf({ TRUST_PROXY: '10.0.0.0/8,proxy.internal' })).toBe(
      'TRUST_PROXY: "proxy.internal" is not an IP address or CIDR block; give addresses and CIDR blocks, comma-separated',
    );
    expect(startupErrorOf({ TRUST_PROXY: '10.0.0.0/40' })).toMatch(/invalid prefix length/);
  });

  it('rejects a TRACKER_PROXY_PROTOCOL that is not true or false, and TRACKER_PROXY_FROM without it or with a bad entry', () => {
    expect(startupErrorOf({ TRACKER_PROXY_PROTOCOL: 'yes' })).toBe('TRACKER_PROXY_PROTOCOL must be true or false, got "yes"');
    expect(startupErrorOf({ TRACKER_PROXY_FROM: '10.0.0.5' })).toBe('TRACKER_PROXY_FROM is set without TRACKER_PROXY_PROTOCOL=true; set both, or neither');
    expect(startupErrorOf({ TRACKER_PROXY_PROTOCOL: 'true', TRACKER_PROXY_FROM: 'haproxy.internal' })).toBe(
      'TRACKER_PROXY_FROM: "haproxy.internal" is not an IP address or CIDR block; give addresses and CIDR blocks, comma-separated',
    );
  });

  it('rejects an unknown LOG_LEVEL, listing the levels', () => {
    expect(startupErrorOf({ LOG_LEVEL: 'verbose' })).toBe('LOG_LEVEL must be one of debug, info, warn, error, silent, got "verbose"');
    for (const level of ['debug', 'info', 'warn', 'error', 'silent']) expect(loadConfig({ LOG_LEVEL: level }).logLevel).toBe(level);
  });

  it('rejects a DATABASE_URL that is not a PostgreSQL URL, without echoing it', () => {
    expect(startupErrorOf({ DATABASE_URL: 'not a url' })).toBe('DATABASE_URL is not a valid URL');
    const message = startupErrorOf({ DATABASE_URL: 'mysql://root:hunter2@db/fleet' });
    expect(message).toBe('DATABASE_URL must start with postgres:// or postgresql://');
    expect(message).not.toContain('hunter2');
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h/d' }).databaseUrl).toBe('postgres://u@h/d');
  });

  it('takes DATABASE_READ_URL only beside DATABASE_URL, and READ_REPLICA_MAX_LAG_MS in ms (default 5000)', () => {
    expect(startupErrorOf({ DATABASE_READ_URL: 'postgres://u@replica/d' })).toBe('DATABASE_READ_URL is set without DATABASE_URL; a read replica needs its primary at DATABASE_URL');
    expect(startupErrorOf({ DATABASE_URL: 'postgres://u@h/d', DATABASE_READ_URL: 'mysql://u:hunter2@replica/d' })).toBe('DATABASE_READ_URL must start with postgres:// or postgresql://');
    const config = loadConfig({ DATABASE_URL: 'postgres://u@h/d', DATABASE_READ_URL: 'postgres://u@replica/d' });
    expect(config).toMatchObject({ readDatabaseUrl: 'postgres://u@replica/d', readReplicaMaxLagMs: 5000 });
    expect(loadConfig({}).readDatabaseUrl).toBeUndefined();
    expect(loadConfig({ READ_REPLICA_MAX_LAG_MS: '1500' }).readReplicaMaxLagMs).toBe(1500);
    expect(startupErrorOf({ READ_REPLICA_MAX_LAG_MS: '50' })).toBe('READ_REPLICA_MAX_LAG_MS must be an integer from 100 to 3600000, got "50"');
  });

  it('takes DATABASE_POOL_MODE session or transaction and DATABASE_LISTEN_URL, both only beside DATABASE_URL', () => {
    const pooled = loadConfig({ DATABASE_URL: 'postgres://u@bouncer:6432/d', DATABASE_POOL_MODE: 'transaction', DATABASE_LISTEN_URL: 'postgres://u@db:5432/d' });
    expect(pooled).toMatchObject({ databasePoolMode: 'transaction', listenDatabaseUrl: 'postgres://u@db:5432/d' });
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h/d', DATABASE_POOL_MODE: 'session' }).databasePoolMode).toBe('session');
    expect(startupErrorOf({ DATABASE_URL: 'postgres://u@h/d', DATABASE_POOL_MODE: 'statement' })).toBe(
      'DATABASE_POOL_MODE must be one of session, transaction (PgBouncer\'s pool_mode), got "statement"',
    );
    expect(startupErrorOf({ DATABASE_POOL_MODE: 'transaction' })).toBe('DATABASE_POOL_MODE=transaction is set without DATABASE_URL; it describes the pooler at DATABASE_URL');
    expect(startupErrorOf({ DATABASE_LISTEN_URL: 'postgres://u@db/d' })).toBe("DATABASE_LISTEN_URL is set without DATABASE_URL; it is a second way to DATABASE_URL's database");
  });

  it('rejects a REDIS_URL that is not a Redis URL', () => {
    expect(startupErrorOf({ REDIS_URL: 'localhost:6379' })).toMatch(/^REDIS_URL (is not a valid URL|must start with redis:\/\/ or rediss:\/\/)$/);
    expect(startupErrorOf({ REDIS_URL: 'http://cache:6379' })).toBe('REDIS_URL must start with redis:// or rediss://');
    expect(startupErrorOf({ REDIS_URL: '::' })).toBe('REDIS_URL is not a valid URL');
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379/2' }).redisUrl).toBe('redis://127.0.0.1:6379/2');
  });

  it('rejects a DEMO_SEED other than auto, true or false', () => {
    expect(startupErrorOf({ DEMO_SEED: 'yes' })).toBe('DEMO_SEED must be auto, true or false, got "yes"');
    expect(loadConfig({ DEMO_SEED: 'false' }).demoSeed).toBe('false');
    expect(loadConfig({ DEMO_SEED: 'auto' }).demoSeed).toBe('auto');
  });

  it('takes GEOCODER and its settings, refusing what cannot work', () => {
    expect(loadConfig({ GEOCODER: 'off' }).geocoder.provider).toBe('off');
    expect(loadConfig({ GEOCODER: 'nominatim', GEOCODER_URL: 'http://nominatim.internal:8080' }).geocoder).toEqual({
      provider: 'nominatim', url: 'http://nominatim.internal:8080', timeoutMs: 3000, requestsPerSecond: 1, cacheSize: 10_000,
    });
    expect(startupErrorOf({ GEOCODER: 'google' })).toBe('GEOCODER must be one of offline, nominatim, photon, pelias, off, got "google"');
    expect(startupErrorOf({ GEOCODER: 'photon' })).toBe("GEOCODER=photon needs GEOCODER_URL, the provider's base URL");
    expect(startupErrorOf({ GEOCODER: 'photon', GEOCODER_URL: 'ftp://photon' })).toBe('GEOCODER_URL must start with http:// or https://');
    expect(startupErrorOf({ GEOCODER: 'nominatim', GEOCODER_URL: 'https://nominatim.openstreetmap.org', GEOCODER_RATE_PER_S: '2' })).toMatch(
      /^GEOCODER_RATE_PER_S must be at most 1 for nominatim.openstreetmap.org/,
    );
    expect(startupErrorOf({ GEOCODER_RATE_PER_S: '0' })).toBe('GEOCODER_RATE_PER_S must be a positive number, got "0"');
    expect(startupErrorOf({ GEOCODER_TIMEOUT_MS: '10' })).toBe('GEOCODER_TIMEOUT_MS must be an integer from 100 to 60000, got "10"');
    expect(startupErrorOf({ GEOCODER_CACHE_SIZE: '-1' })).toBe('GEOCODER_CACHE_SIZE must be an integer from 0 to 10000000, got "-1"');
  });

  it('takes MAP_TILE_URL with its MAP_TILE_ATTRIBUTION, and by default no tile server (the offline map)', () => {
    expect(loadConfig({}).mapTiles).toBeUndefined();
    const url = 'https://tile.example.com/{z}/{x}/{y}.png?key=abc';
    expect(loadConfig({ MAP_TILE_URL: url, MAP_TILE_ATTRIBUTION: ' © OpenStreetMap contributors ' }).mapTiles).toEqual({ url, attribution: '© OpenStreetMap contributors' });
    expect(loadConfig({ MAP_TILE_URL: 'http://127.0.0.1:8080/tiles/{z}/{x}/{y}{r}.png', MAP_TILE_ATTRIBUTION: 'Ours' }).mapTiles?.url).toBe('http://127.0.0.1:8080/tiles/{z}/{x}/{y}{r}.png');
    const attribution = { MAP_TILE_ATTRIBUTION: 'Tiles' };
    expect(startupErrorOf({ MAP_TILE_URL: url })).toMatch(/^MAP_TILE_ATTRIBUTION is required with MAP_TILE_URL/);
    expect(startupErrorOf({ MAP_TILE_URL: url, MAP_TILE_ATTRIBUTION: '  ' })).toMatch(/^MAP_TILE_ATTRIBUTION is required with MAP_TILE_URL/);
    expect(startupErrorOf({ MAP_TILE_ATTRIBUTION: 'Tiles' })).toBe('MAP_TILE_ATTRIBUTION is set without MAP_TILE_URL; set both, or neither for the offline map');
    expect(startupErrorOf({ MAP_TILE_URL: 'tiles/{z}/{x}/{y}.png', ...attribution })).toMatch(/^MAP_TILE_URL is not a valid URL/);
    expect(startupErrorOf({ MAP_TILE_URL: 'ftp://tile.example.com/{z}/{x}/{y}.png', ...attribution })).toBe('MAP_TILE_URL must start with http:// or https://');
    expect(startupErrorOf({ MAP_TILE_URL: 'https://tile.example.com/{z}/{x}.png', ...attribution })).toMatch(/^MAP_TILE_URL must contain \{z\}, \{x\} and \{y\}, lacks \{y\}/);
    expect(startupErrorOf({ MAP_TILE_URL: 'https://{s}.tile.example.com/{z}/{x}/{y}.png', ...attribution })).toMatch(/^MAP_TILE_URL must name one host/);
    expect(startupErrorOf({ MAP_TILE_URL: 'https://me:secret@tile.example.com/{z}/{x}/{y}.png', ...attribution })).toMatch(/^MAP_TILE_URL must not hold a user or password/);
    expect(startupErrorOf({ MAP_TILE_URL: url, MAP_TILE_ATTRIBUTION: 'x'.repeat(301) })).toBe('MAP_TILE_ATTRIBUTION must be at most 300 characters, got 301');
  });

  it('rejects the numeric limits out of range, naming the variable', () => {
    expect(startupErrorOf({ RATE_LIMIT_MAX: '0' })).toMatch(/^RATE_LIMIT_MAX must be an integer from 1 to /);
    expect(startupErrorOf({ ENGINE_QUEUES: '0' })).toBe('ENGINE_QUEUES must be an integer from 1 to 64, got "0"');
    expect(startupErrorOf({ ENGINE_QUEUES: '65' })).toBe('ENGINE_QUEUES must be an integer from 1 to 64, got "65"');
    expect(startupErrorOf({ BODY_LIMIT_BYTES: '10' })).toMatch(/^BODY_LIMIT_BYTES must be an integer from 1024 to /);
    expect(startupErrorOf({ INACTIVE_AFTER_MINUTES: '0' })).toBe('INACTIVE_AFTER_MINUTES must be a positive number, got "0"');
    expect(startupErrorOf({ MOVING_SPEED_KMH: 'fast' })).toBe('MOVING_SPEED_KMH must be a positive number, got "fast"');
    expect(startupErrorOf({ HARSH_BRAKING_MS2: '0' })).toBe('HARSH_BRAKING_MS2 must be a positive number, got "0"');
    expect(startupErrorOf({ HARSH_CORNERING_MS2: '15' })).toBe('HARSH_CORNERING_MS2 must be at most 12 m/s² (1.2 g), got "15"');
    expect(startupErrorOf({ IDLE_MIN_S: '5' })).toBe('IDLE_MIN_S must be an integer from 10 to 86400, got "5"');
    expect(startupErrorOf({ FUEL_DROP_MIN_PERCENT: '0' })).toBe('FUEL_DROP_MIN_PERCENT must be a positive number, got "0"');
    expect(startupErrorOf({ FUEL_REFILL_MIN_PERCENT: '100' })).toBe('FUEL_REFILL_MIN_PERCENT must be below 100 (percentage points of the tank), got "100"');
    expect(startupErrorOf({ GEOCODER_REUSE_DISTANCE_M: '-1' })).toMatch(/^GEOCODER_REUSE_DISTANCE_M must be an integer from 0 to 100000/);
  });

  it('rejects position partitions out of range, or wider than the retention', () => {
    expect(startupErrorOf({ POSITIONS_RETENTION_DAYS: '0' })).toBe('POSITIONS_RETENTION_DAYS must be an integer from 1 to 36500, got "0"');
    expect(startupErrorOf({ POSITIONS_PARTITION_DAYS: '32' })).toBe('POSITIONS_PARTITION_DAYS must be an integer from 1 to 31, got "32"');
    expect(startupErrorOf({ POSITIONS_PARTITIONS_AHEAD_DAYS: '0' })).toBe('POSITIONS_PARTITIONS_AHEAD_DAYS must be an integer from 1 to 365, got "0"');
    expect(startupErrorOf({ POSITIONS_RETENTION_DAYS: '5', POSITIONS_PARTITION_DAYS: '7' })).toBe('POSITIONS_PARTITION_DAYS (7) must not exceed POSITIONS_RETENTION_DAYS (5)');
    expect(loadConfig({ POSITIONS_RETENTION_DAYS: '7', POSITIONS_PARTITION_DAYS: '7' }).positionHistory).toEqual({ retentionDays: 7, partitionDays: 7, aheadDays: 7 });
  });

  it('gives one account 8 of the webhook slots as of right unless told, never more than all of them', () => {
    expect(loadConfig({}).webhooks).toMatchObject({ concurrency: 128, accountConcurrency: 8 });
    expect(loadConfig({ WEBHOOK_CONCURRENCY: '100' }).webhooks.accountConcurrency).toBe(8);
    expect(loadConfig({ WEBHOOK_CONCURRENCY: '2' }).webhooks.accountConcurrency).toBe(2);
    expect(startupErrorOf({ WEBHOOK_CONCURRENCY: '4', WEBHOOK_ACCOUNT_CONCURRENCY: '5' })).toBe('WEBHOOK_ACCOUNT_CONCURRENCY (5) must not exceed WEBHOOK_CONCURRENCY (4)');
    expect(startupErrorOf({ WEBHOOKS_PER_USER: '0' })).toBe('WEBHOOKS_PER_USER must be an integer from 1 to 10000, got "0"');
  });

  it('reads process.env when given nothing', () => {
    expect(loadConfig().port).toBe(loadConfig(process.env).port);
  });
});

describe('redactUrl', () => {
  it('hides the password and keeps the rest', () => {
    expect(redactUrl('postgres://fleet:s3cret@db.example:5432/fleet?sslmode=require')).toBe('postgres://fleet:***@db.example:5432/fleet?sslmode=require');
    expect(redactUrl('redis://:topsecret@cache:6379/0')).toBe('redis://:***@cache:6379/0');
  });

  it('hides passwords with escaped characters', () => {
    const redacted = redactUrl('postgresql://fleet:p%40ss%3Aword@db/fleet');
    expect(redacted).toBe('postgresql://fleet:***@db/fleet');
    expect(redacted).not.toMatch(/p%40ss|word/);
  });

  it('leaves a URL without password as it is', () => {
    expect(redactUrl('postgres://postgres@127.0.0.1:5432/fleetcore_dev')).toBe('postgres://postgres@127.0.0.1:5432/fleetcore_dev');
  });

  it('never echoes a string it cannot parse', () => {
    expect(redactUrl('postgres://fleet:s3cret@[db-host/fleet')).toBe('<invalid url>');
  });
});
