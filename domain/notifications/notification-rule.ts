import { DomainError } from '../domain-error.ts';
import { matchesEventType, parseEventTypePatterns, type EventTypePatterns } from '../events/event-catalog.ts';
import { inSchedule, type NotificationSchedule } from './notification-schedule.ts';

/**
 * Which events a notification rule takes, and to whom each goes on which channel: pure, so the
 * fan-out (db/notification-fanout.ts) reads what it needs, asks here, and writes what comes back.
 */

export const NOTIFICATION_CHANNELS = ['email', 'push', 'telegram', 'sms'] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];

export function isNotificationChannel(name: string): name is NotificationChannel {
  return (NOTIFICATION_CHANNELS as readonly string[]).includes(name);
}

export interface NotificationRecipient {
  userId: number;
  channels: NotificationChannel[];
}

export type VehicleScope = 'all' | 'groups' | 'list';

/** A rule as the fan-out reads it. */
export interface NotificationRule {
  id: number;
  accountId: number;
  mode: 'live' | 'test';
  events: readonly string[];
  vehicleScope: VehicleScope;
  groupIds: readonly number[];
  deviceIds: readonly number[];
  /** Null: any geofence. Only kinds whose event names a geofence are filtered by it. */
  geofenceIds: readonly number[] | null;
  schedule: NotificationSchedule | null;
  timezone: string;
  minIntervalS: number;
  recipients: readonly NotificationRecipient[];
  createdAt: Date;
}

/** A logged event as the fan-out reads it. */
export interface LoggedEventForRules {
  id: string;
  accountId: number;
  mode: 'live' | 'test' | null;
  type: string;
  deviceId: number | null;
  /** For an event without a vehicle: the only user who may see it (null: every user of the account). */
  userId: number | null;
  occurredAt: Date;
  recordedAt: Date;
  data: Record<string, unknown>;
}

/** Kinds no rule may take: a stored fix is thousands a second (webhooks and the stream carry them), and webhook kinds concern integrators. */
const NEVER_NOTIFIED = ['vehicle.position', 'webhook.disabled', 'webhook.test'];

export class NotificationRuleError extends DomainError {
  override name = 'NotificationRuleError';
  constructor(message: string) {
    super('invalid', message);
  }
}

/** The rule's event patterns, checked: known kinds and families, none of those never notified. */
export function ruleEventPatterns(events: readonly string[]): EventTypePatterns {
  const patterns = parseEventTypePatterns(events);
  const refused = patterns.exact.filter((t) => NEVER_NOTIFIED.includes(t));
  if (refused.length > 0) throw new NotificationRuleError(`${refused.join(', ')} cannot be notified to people; use a webhook or the event stream`);
  if (patterns.exact.length === 0 && patterns.prefixes.length === 0) throw new NotificationRuleError('at least one event kind is needed');
  return patterns;
}

const patternsByRule = new WeakMap<readonly string[], EventTypePatterns>();

function patternsOf(rule: NotificationRule): EventTypePatterns {
  let patterns = patternsByRule.get(rule.events);
  if (!patterns) patternsByRule.set(rule.events, (patterns = parseEventTypePatterns(rule.events)));
  return patterns;
}

/** The geofence an event names (`data.geofence.id`), if its kind has one. */
function eventGeofenceId(data: Record<string, unknown>): number | undefined {
  const geofence = data.geofence as { id?: unknown } | undefined;
  return typeof geofence?.id === 'number' ? geofence.id : undefined;
}

/**
 * Whether the rule takes the event, before recipients and the minimum interval: same account and
 * mode, logged after the rule was made, a kind it names, one of its vehicles, one of its geofences
 * (for kinds with one), inside its schedule at the time the event happened.
 */
export function ruleTakesEvent(rule: NotificationRule, event: LoggedEventForRules, deviceGroupIds: readonly number[]): boolean {
  if (event.accountId !== rule.accountId) return false;
  if (event.mode !== null && event.mode !== rule.mode) return false;
  if (event.recordedAt.getTime() < rule.createdAt.getTime()) return false;
  if (NEVER_NOTIFIED.includes(event.type) || !matchesEventType(patternsOf(rule), event.type)) return false;
  if (rule.vehicleScope !== 'all') {
    if (event.deviceId === null) return false;
    if (rule.vehicleScope === 'list' && !rule.deviceIds.includes(event.deviceId)) return false;
    if (rule.vehicleScope === 'groups' && !rule.groupIds.some((g) => deviceGroupIds.includes(g))) return false;
  }
  if (rule.geofenceIds !== null) {
    const geofenceId = eventGeofenceId(event.data);
    if (geofenceId !== undefined && !rule.geofenceIds.includes(geofenceId)) return false;
  }
  return rule.schedule === null || inSchedule(rule.schedule, event.occurredAt, rule.timezone);
}

/** What the fan-out knows of a recipient when it plans. */
export interface RecipientState {
  /** A current user of the rule's account, not muted now. */
  active: boolean;
  /** Whether the user may see the vehicle (their grants and groups); for an event without one, whether it is theirs to see. */
  mayReadDevice(deviceId: number): boolean;
  /** Their browsers' push subscriptions: web push goes to each. */
  pushSubscriptionIds: readonly number[];
}

export interface PlannedDelivery {
  ruleId: number;
  eventId: string;
  eventType: string;
  accountId: number;
  userId: number;
  channel: NotificationChannel;
  pushSubscriptionId: number | null;
}

export interface NotificationPlan {
  deliveries: PlannedDelivery[];
  /** (rule, vehicle) pairs that notified, and when: the minimum interval counts from these. */
  notified: Array<{ ruleId: number; deviceId: number; at: Date }>;
}

export interface PlanContext {
  groupsOfDevice(deviceId: number): readonly number[];
  recipient(userId: number): RecipientState | undefined;
  /** When this rule last notified about this vehicle, if it has. */
  lastNotified(ruleId: number, deviceId: number): Date | undefined;
}

/**
 * The deliveries a batch of events makes, in event order. A rule with a minimum interval notifies
 * about one vehicle at most once per interval (counted in event time, within the batch as across
 * batches), so a flapping alarm notifies once. A recipient gets an event only about a vehicle they
 * may see, on the channels they chose, once per event and channel (and browser) however many rules
 * take it.
 */
export function planNotifications(events: readonly LoggedEventForRules[], rules: readonly NotificationRule[], context: PlanContext): NotificationPlan {
  const deliveries: PlannedDelivery[] = [];
  const notified = new Map<string, { ruleId: number; deviceId: number; at: Date }>();
  for (const event of events) {
    const groups = event.deviceId === null ? [] : context.groupsOfDevice(event.deviceId);
    const sent = new Set<string>();
    for (const rule of rules) {
      if (!ruleTakesEvent(rule, event, groups)) continue;
      if (event.deviceId !== null && rule.minIntervalS > 0) {
        const key = `${rule.id}:${event.deviceId}`;
        const last = notified.get(key)?.at ?? context.lastNotified(rule.id, event.deviceId);
        if (last && Math.abs(event.occurredAt.getTime() - last.getTime()) < rule.minIntervalS * 1000) continue;
      }
      let any = false;
      for (const recipient of rule.recipients) {
        const state = context.recipient(recipient.userId);
        if (!state?.active) continue;
        if (event.deviceId !== null ? !state.mayReadDevice(event.deviceId) : event.userId !== null && event.userId !== recipient.userId) continue;
        for (const channel of recipient.channels) {
          // A recipient without an address on the channel still gets a delivery: it fails with the
          // reason, so the rule's log shows why nobody was told.
          const targets = channel === 'push' && state.pushSubscriptionIds.length > 0 ? state.pushSubscriptionIds : [null];
          for (const pushSubscriptionId of targets) {
            const key = `${recipient.userId}:${channel}:${pushSubscriptionId ?? 0}`;
            if (sent.has(key)) continue;
            sent.add(key);
            any = true;
            deliveries.push({ ruleId: rule.id, eventId: event.id, eventType: event.type, accountId: event.accountId, userId: recipient.userId, channel, pushSubscriptionId });
          }
        }
      }
      // The interval counts from a notification the rule made, not from one no recipient could take.
      if (any && event.deviceId !== null && rule.minIntervalS > 0) notified.set(`${rule.id}:${event.deviceId}`, { ruleId: rule.id, deviceId: event.deviceId, at: event.occurredAt });
    }
  }
  return { deliveries, notified: [...notified.values()] };
}
