import { z } from '@hono/zod-openapi';
import type { NotificationRuleRow, RuleDeliveryRow } from '../../db/notification-rules.ts';
import type { OwnChannels } from '../../db/notification-settings.ts';
import type { ReportSubscriptionRow } from '../../db/report-subscriptions.ts';
import { NOTIFICATION_CHANNELS } from '../../domain/notifications/notification-rule.ts';
import { REPORT_KINDS } from '../../domain/notifications/report-schedule.ts';
import { timeObject } from '../../domain/time/zoned-time.ts';
import { TimeObjectSchema } from './travel-view.ts';

/** Times are {local, utc} objects, local in the calling user's timezone, as the travels' are. */
const time = (instant: Date, timeZone: string) => timeObject(instant, timeZone);
const maybeTime = (instant: Date | null, timeZone: string) => (instant === null ? null : timeObject(instant, timeZone));
/** A time object or null, as a union: `.nullable()` on a registered schema is rendered as an intersection no null satisfies. */
const nullableTime = (description: string) => z.union([TimeObjectSchema, z.null()]).openapi({ description });

export const ChannelSchema = z.enum(NOTIFICATION_CHANNELS).openapi({ example: 'email' });

export const ScheduleSchema = z
  .object({
    days: z.array(z.number().int()).openapi({ description: 'ISO weekdays, 1 = Monday … 7 = Sunday', example: [1, 2, 3, 4, 5] }),
    from: z.string().openapi({ description: 'HH:mm in the rule\'s timezone', example: '08:00' }),
    to: z.string().openapi({ description: 'HH:mm; not after `from`: the window runs past midnight (22:00 to 06:00 is the night); equal to `from`: the whole day', example: '18:00' }),
  })
  .openapi('NotificationSchedule');

export const RuleVehiclesSchema = z
  .object({
    scope: z.enum(['all', 'groups', 'list']).openapi({ description: 'all: every vehicle of the account and mode; groups: those of `groupIds`; list: those of `vehicleIds`' }),
    groupIds: z.array(z.number().int()).optional().openapi({ description: 'With scope groups: vehicle groups of the account and mode', example: [3] }),
    vehicleIds: z.array(z.string()).optional().openapi({ description: 'With scope list: vehicles by IMEI (the ids of GET /vehicles)', example: ['356307042441013'] }),
  })
  .openapi('NotificationRuleVehicles');

export const NotificationRuleSchema = z
  .object({
    id: z.number().int().openapi({ example: 4 }),
    name: z.string().openapi({ example: 'Depot arrivals' }),
    events: z.array(z.string()).openapi({ example: ['vehicle.geofence.enter', 'vehicle.panic'] }),
    vehicles: RuleVehiclesSchema,
    geofenceIds: z.array(z.number().int()).nullable().openapi({ description: 'Only events at these geofences (for kinds that name one); null: any', example: [12] }),
    schedule: z.union([ScheduleSchema, z.null()]).openapi({ description: 'When the rule notifies, in its timezone; null: at any time' }),
    timezone: z.string().openapi({ example: 'America/Mexico_City' }),
    minIntervalSeconds: z.number().int().openapi({ description: 'At most one notification per vehicle in this many seconds; 0: every event', example: 600 }),
    recipients: z.array(z.object({
      userId: z.number().int().openapi({ example: 9 }),
      name: z.string().nullable().openapi({ example: 'Ana López' }),
      email: z.string().nullable().openapi({ description: 'The user\'s sign-in email', example: 'ana@example.com' }),
      channels: z.array(ChannelSchema).openapi({ example: ['email', 'push'] }),
    })),
    enabled: z.boolean(),
    createdAt: TimeObjectSchema,
    updatedAt: TimeObjectSchema,
  })
  .openapi('NotificationRule');

type Users = Map<number, { name: string | null; email: string }>;

export function notificationRuleView(r: NotificationRuleRow, users: Users, timeZone: string): z.infer<typeof NotificationRuleSchema> {
  const vehicles = r.vehicle_scope === 'groups' ? { scope: r.vehicle_scope, groupIds: r.group_ids }
    : r.vehicle_scope === 'list' ? { scope: r.vehicle_scope, vehicleIds: r.imeis }
    : { scope: r.vehicle_scope };
  return {
    id: r.id, name: r.name, events: r.events, vehicles, geofenceIds: r.geofence_ids, schedule: r.schedule, timezone: r.timezone, minIntervalSeconds: r.min_interval_s,
    recipients: r.recipients.map((x) => ({ userId: x.userId, name: users.get(x.userId)?.name ?? null, email: users.get(x.userId)?.email ?? null, channels: x.channels })),
    enabled: r.enabled, createdAt: time(r.created_at, timeZone), updatedAt: time(r.updated_at, timeZone),
  };
}

export const RuleDeliverySchema = z
  .object({
    id: z.string().openapi({ example: '8812' }),
    channel: ChannelSchema,
    recipient: z.object({
      userId: z.number().int().openapi({ example: 9 }),
      name: z.string().nullable().openapi({ example: 'Ana López' }),
      email: z.string().nullable().openapi({ example: 'ana@example.com' }),
    }),
    event: z.union([
      z.object({ id: z.string().openapi({ example: '40211' }), type: z.string().openapi({ example: 'vehicle.geofence.enter' }) }),
      z.null(),
    ]).openapi({ description: 'The logged event notified: its id in the event log (GET /events) and its kind' }),
    status: z.enum(['pending', 'succeeded', 'failed']),
    attempts: z.number().int(),
    lastError: z.string().nullable().openapi({ example: null }),
    lastAttemptAt: nullableTime('null before the first attempt'),
    nextAttemptAt: nullableTime('When the next attempt is due; null once succeeded or failed'),
    deliveredAt: nullableTime('When the channel took the message; null until then'),
    createdAt: TimeObjectSchema,
  })
  .openapi('NotificationDelivery');

export function ruleDeliveryView(d: RuleDeliveryRow, timeZone: string): z.infer<typeof RuleDeliverySchema> {
  return {
    id: String(d.id), channel: d.channel, recipient: { userId: d.user_id, name: d.user_name, email: d.user_email },
    event: d.event_id === null ? null : { id: String(d.event_id), type: d.event_type ?? '' },
    status: d.status, attempts: d.attempts, lastError: d.last_error, lastAttemptAt: maybeTime(d.last_attempt_at, timeZone),
    nextAttemptAt: d.status === 'pending' ? time(d.next_attempt_at, timeZone) : null, deliveredAt: maybeTime(d.delivered_at, timeZone),
    createdAt: time(d.created_at, timeZone),
  };
}

export const AvailableChannelsSchema = z
  .object({ email: z.boolean(), push: z.boolean(), telegram: z.boolean(), sms: z.boolean() })
  .openapi('AvailableNotificationChannels', { description: 'The channels this server is configured to send on; a delivery on another fails' });

export const OwnChannelsSchema = z
  .object({
    email: z.string().nullable().openapi({ description: 'An address of the user\'s own for notifications; null: the sign-in email', example: null }),
    effectiveEmail: z.string().openapi({ description: 'Where notification emails go', example: 'ana@example.com' }),
    telegramChatId: z.string().nullable().openapi({ description: 'The Telegram chat the bot writes to (a numeric id or @channel)', example: '123456789' }),
    phone: z.string().nullable().openapi({ description: 'E.164 number for SMS', example: '+5215512345678' }),
    muted: z.boolean().openapi({ description: 'true: no notification is sent to the user on any channel' }),
    mutedUntil: nullableTime('Muted until then (notifications resume by themselves); null: not muted for a time'),
    pushSubscriptions: z.array(z.object({
      id: z.number().int().openapi({ example: 5 }),
      userAgent: z.string().nullable().openapi({ example: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' }),
      createdAt: TimeObjectSchema,
    })).openapi({ description: 'The browsers subscribed for web push' }),
    available: AvailableChannelsSchema,
    vapidPublicKey: z.string().nullable().openapi({ description: 'The applicationServerKey a browser subscribes with (base64url); null: web push is not configured', example: 'BNc6…' }),
  })
  .openapi('NotificationChannels');

export interface PushSubscriptionSummary {
  id: number;
  user_agent: string | null;
  created_at: Date;
}

export function ownChannelsView(
  channels: OwnChannels,
  subscriptions: PushSubscriptionSummary[],
  server: { available: z.infer<typeof AvailableChannelsSchema>; vapidPublicKey: string | null },
  timeZone: string,
): z.infer<typeof OwnChannelsSchema> {
  return {
    email: channels.email, effectiveEmail: channels.email ?? channels.signInEmail, telegramChatId: channels.telegramChatId, phone: channels.phone,
    muted: channels.muted, mutedUntil: maybeTime(channels.mutedUntil, timeZone),
    pushSubscriptions: subscriptions.map((s) => ({ id: s.id, userAgent: s.user_agent, createdAt: time(s.created_at, timeZone) })),
    available: server.available, vapidPublicKey: server.vapidPublicKey,
  };
}

export const ReportSubscriptionSchema = z
  .object({
    id: z.number().int().openapi({ example: 2 }),
    frequency: z.enum(['daily', 'weekly']),
    reports: z.array(z.enum(REPORT_KINDS)).openapi({ example: ['trips', 'geofences'] }),
    time: z.string().openapi({ description: 'HH:mm in `timezone`', example: '07:00' }),
    weekday: z.number().int().nullable().openapi({ description: 'ISO weekday (1 = Monday) of a weekly one; null for a daily one', example: 1 }),
    timezone: z.string().openapi({ example: 'America/Mexico_City' }),
    enabled: z.boolean(),
    nextRunAt: TimeObjectSchema,
    lastRunAt: nullableTime('When the last one was sent; null: none yet'),
    createdAt: TimeObjectSchema,
    updatedAt: TimeObjectSchema,
  })
  .openapi('ReportSubscription');

export function reportSubscriptionView(s: ReportSubscriptionRow, timeZone: string): z.infer<typeof ReportSubscriptionSchema> {
  return {
    id: s.id, frequency: s.frequency, reports: s.reports as z.infer<typeof ReportSubscriptionSchema>['reports'], time: s.local_time, weekday: s.weekday,
    timezone: s.timezone, enabled: s.enabled, nextRunAt: time(s.next_run_at, timeZone), lastRunAt: maybeTime(s.last_run_at, timeZone),
    createdAt: time(s.created_at, timeZone), updatedAt: time(s.updated_at, timeZone),
  };
}
