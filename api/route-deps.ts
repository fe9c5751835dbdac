import type { Logger } from '../runtime/logger.ts';
import type { Db } from '../db/database.ts';
import type { DeviceStatusThresholds } from '../domain/device-status.ts';
import type { CommandBus } from '../ingest/commands/command-bus.ts';
import type { LatestStateReads } from './fresh-reads/latest-state-reads.ts';
import type { NotificationChannel } from '../domain/notifications/notification-rule.ts';

/** What the route modules need, passed in rather than imported, so tests build the app on any database. */
export interface RouteDeps {
  /** The primary: writes, reads that must see them, and anything deciding access. */
  db: Db;
  /** Reads that may be a few seconds old (lists, detail pages, history, reports): the read replica while it keeps up, else `db`. */
  staleDb: Db;
  log: Logger;
  config: {
    deviceStatus: DeviceStatusThresholds;
    onTimeToleranceMinutes: number;
    /** Let webhooks point at loopback, private and other reserved addresses (WEBHOOK_ALLOW_PRIVATE). */
    webhookAllowPrivate?: boolean;
    /** WEBHOOKS_PER_USER: webhooks one user may have in one mode (default 20). */
    webhooksPerUser?: number;
    /** TRIP_MAX_GAP_S: a trip in progress whose vehicle has been silent this long is shown ended (default 3600). */
    tripMaxGapS?: number;
    /** COMMAND_SAFE_STOP_KMH and COMMAND_MAX_ATTEMPTS (defaults 20 and 3). */
    commands?: { safeStopKmh: number; safeStopMaxFixAgeMs: number; maxAttempts: number };
  };
  /** Tells the engine when a travel must start; absent, the engine's periodic catch-up starts it. */
  travelSchedule?: TravelSchedule;
  /** Absent, due deliveries wait for the webhook workers' periodic sweep of the database. */
  webhookDispatch?: WebhookDispatch;
  /** Wakes the process holding a device's connection when a command is queued; absent, its sweep finds it. */
  commandBus?: Pick<CommandBus, 'notify'>;
  /** The fleet-wide reads (status list, vehicle list), at most a second old, shared by this process's requests. */
  latestState: LatestStateReads;
  /** What the server sends notifications on, as the notification routes tell users. */
  notifications: NotificationServer;
}

/** The notification channels configured on this server, and what users' own addresses may be. */
export interface NotificationServer {
  /** Each channel: whether the server is configured to send on it. */
  available: Record<NotificationChannel, boolean>;
  /** VAPID_PUBLIC_KEY, the applicationServerKey browsers subscribe with; null without web push. */
  vapidPublicKey: string | null;
  /** Push endpoints may be http:// and at private addresses (WEBHOOK_ALLOW_PRIVATE; for tests and closed networks). */
  allowPrivatePushEndpoints: boolean;
}

/** No channel configured: what a server without notification settings (and a test app) tells users. */
export const NO_NOTIFICATION_CHANNELS: NotificationServer = {
  available: { email: false, push: false, telegram: false, sms: false }, vapidPublicKey: null, allowPrivatePushEndpoints: false,
};

/** Tells the webhook workers that deliveries are due now (a test ping, a manual retry). */
export interface WebhookDispatch {
  /** `requestId`: the API request asking, carried into the delivery job's log lines. */
  deliverSoon(deliveryIds: string[], requestId?: string): Promise<void>;
}

export interface TravelSchedule {
  /** `requestId`: the API request that created the travel, carried into the start job's log lines. */
  scheduled(travelId: number, startTime: Date, requestId?: string): Promise<void>;
  cancelled(travelId: number): Promise<void>;
}
