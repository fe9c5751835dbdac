import type { DatabaseHandle } from '../../db/database.ts';
import { createGeocoder } from '../../engine/geocoding/create-geocoder.ts';
import type { QueueBackend } from '../../engine/queue/job-queue.ts';
import { startEngine } from '../../engine/start-engine.ts';
import type { StoredFix } from '../../domain/stored-rows.ts';
import { startWebhookDelivery } from '../../engine/webhooks/start-webhook-delivery.ts';
import { createChannels } from '../../engine/notifications/channels/create-channels.ts';
import { buildReportEmail } from '../../engine/notifications/report-email.ts';
import { startReportScheduler } from '../../engine/notifications/report-scheduler.ts';
import { startNotifications, type RunningNotifications } from '../../engine/notifications/start-notifications.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { Config } from '../config.ts';

/** The engine role: the engine queue's worker and its schedules, webhook delivery on its own queue, and notifications for people. */
export async function startEngineRole(config: Config, log: Logger, deps: { database: DatabaseHandle; queues: QueueBackend }): Promise<{ fixesCommitted(fixes: readonly StoredFix[]): void; stop(): Promise<void> }> {
  // GEOCODER=off: no address keeper at all, rather than one asking a geocoder that never answers.
  const geocoder = config.geocoder.provider === 'off' ? undefined : createGeocoder(config.geocoder, log);
  // The offline places take about a second to parse, holding the event loop: paid here, before this
  // process serves trackers or requests, rather than at the first address looked up.
  const loading = Date.now();
  await geocoder?.ready?.();
  if (geocoder) log.info('geocoder ready', { provider: config.geocoder.provider, ms: Date.now() - loading });
  const engine = await startEngine(deps.database, deps.queues, log, {
    status: config.deviceStatus,
    eta: { roadFactor: config.engine.roadFactor, defaultSpeedKmh: config.engine.defaultSpeedKmh },
    etaRefreshMs: config.engine.etaRefreshMs,
    inactivitySweepMs: config.engine.inactivitySweepMs,
    maintenanceCheckMs: config.engine.maintenanceCheckMs,
    geofencePollMs: config.engine.geofencePollMs,
    concurrency: config.engine.concurrency,
    queues: config.engine.queues,
    fixesPerDevice: 1000,
    lateWindowMs: config.engine.lateWindowMs,
    retention: {
      geofenceChangesMs: config.engine.geofenceChangesRetentionMs,
      lateFixesMs: config.engine.lateFixesRetentionMs,
      eventsMs: config.eventsRetentionMs,
      webhookDeliveriesMs: config.webhooks.deliveryRetentionMs,
      mediaMs: config.media.retentionMs,
    },
    pruneIntervalMs: config.engine.pruneIntervalMs,
    positionHistory: config.positionHistory,
    commandExpiryMs: config.commands.expirySweepMs,
    overspeedHysteresisKmh: config.engine.overspeedHysteresisKmh,
    trips: config.engine.trips,
    driving: config.engine.driving,
    onTimeToleranceMinutes: config.onTimeToleranceMinutes,
    fuel: config.engine.fuel,
    ...(geocoder ? { geocoding: { geocoder, reuseM: config.engine.addressReuseM } } : {}),
  }).catch(async (error: unknown) => {
    await geocoder?.close?.();
    throw error;
  });
  let webhooks;
  try {
    webhooks = await startWebhookDelivery(deps.database, deps.queues, log, {
      timeoutMs: config.webhooks.timeoutMs,
      allowPrivate: config.webhooks.allowPrivate,
      concurrency: config.webhooks.concurrency,
      perAccountInFlight: config.webhooks.accountConcurrency,
      // No cap of its own: all of what its account may have in flight but one (FairLanes).
      perWebhookInFlight: config.webhooks.concurrency,
      maxConsecutiveFailures: config.webhooks.maxConsecutiveFailures,
      // Polled as well as woken by NOTIFY: measured, the poll keeps the p99 from commit to receiver under a second.
      fanOutPollMs: 100,
      sweepMs: 30_000,
    });
  } catch (error) {
    await engine.close();
    await geocoder?.close?.();
    throw error;
  }
  let notifications: RunningNotifications;
  try {
    notifications = await startEngineNotifications(config, log, deps.database);
  } catch (error) {
    await webhooks.close();
    await engine.close();
    await geocoder?.close?.();
    throw error;
  }
  return {
    fixesCommitted: engine.fixesCommitted,
    async stop() {
      await notifications.close();
      await webhooks.close();
      await engine.close();
      await geocoder?.close?.();
    },
  };
}

/** Notifications for people: the configured channels, event fan-out and sending, and scheduled reports. */
function startEngineNotifications(config: Config, log: Logger, database: DatabaseHandle): Promise<RunningNotifications> {
  const settings = config.notifications;
  return startNotifications(database, log, createChannels(settings, log), {
    concurrency: settings.concurrency,
    retryDelaysMs: settings.retryDelaysMs,
    timeoutMs: settings.timeoutMs,
    // As the webhooks' fan-out: polled as well as woken by NOTIFY.
    pollMs: 250,
    deliveryRetentionMs: settings.deliveryRetentionMs,
    ...(config.access.publicUrl ? { publicUrl: config.access.publicUrl } : {}),
  }, {
    message: (delivery) => buildReportEmail(database.db, {
      accountId: delivery.accountId, userId: delivery.userId, reportSubscriptionId: delivery.report!.subscriptionId,
      periodStart: delivery.report!.periodStart, periodEnd: delivery.report!.periodEnd,
    }),
    start: (scheduled) => startReportScheduler(database.db, log, { everyMs: settings.reportCheckMs, onScheduled: scheduled }),
  });
}
