import { describe, expect, it } from 'vitest';
import { planNotifications, ruleEventPatterns, type LoggedEventForRules, type NotificationRule, type PlanContext, type RecipientState } from './notification-rule.ts';

const rule = (over: Partial<NotificationRule> = {}): NotificationRule => ({
  id: 1, accountId: 10, mode: 'live', events: ['vehicle.geofence.*'], vehicleScope: 'all', groupIds: [], deviceIds: [], geofenceIds: null,
  schedule: null, timezone: 'UTC', minIntervalS: 0, recipients: [{ userId: 5, channels: ['email'] }], createdAt: new Date('2026-01-01T00:00:00Z'), ...over,
});

let nextId = 1;
const event = (over: Partial<LoggedEventForRules> = {}): LoggedEventForRules => ({
  id: String(nextId++), accountId: 10, mode: 'live', type: 'vehicle.geofence.enter', deviceId: 100, userId: null,
  occurredAt: new Date('2026-11-27T12:00:00Z'), recordedAt: new Date('2026-11-27T12:00:01Z'), data: { geofence: { id: 7, name: 'Airport' } }, ...over,
});

const person = (over: Partial<RecipientState> = {}): RecipientState => ({
  active: true, mayReadDevice: () => true, pushSubscriptionIds: [], ...over,
});

const context = (over: Partial<PlanContext> = {}): PlanContext => ({
  groupsOfDevice: () => [], recipient: () => person(), lastNotified: () => undefined, ...over,
});

describe('planning notifications', () => {
  it('makes one delivery per recipient and channel for an event the rule takes', () => {
    const plan = planNotifications([event()], [rule({ recipients: [{ userId: 5, channels: ['email', 'sms'] }, { userId: 6, channels: ['telegram'] }] })], context());
    expect(plan.deliveries.map((d) => [d.userId, d.channel])).toEqual([[5, 'email'], [5, 'sms'], [6, 'telegram']]);
  });

  it('takes only the kinds, vehicles, groups and geofences named', () => {
    const ctx = context({ groupsOfDevice: (id) => (id === 100 ? [3] : []) });
    expect(planNotifications([event({ type: 'vehicle.panic' })], [rule()], ctx).deliveries).toHaveLength(0);
    expect(planNotifications([event()], [rule({ vehicleScope: 'list', deviceIds: [101] })], ctx).deliveries).toHaveLength(0);
    expect(planNotifications([event()], [rule({ vehicleScope: 'list', deviceIds: [100] })], ctx).deliveries).toHaveLength(1);
    expect(planNotifications([event()], [rule({ vehicleScope: 'groups', groupIds: [4] })], ctx).deliveries).toHaveLength(0);
    expect(planNotifications([event()], [rule({ vehicleScope: 'groups', groupIds: [3] })], ctx).deliveries).toHaveLength(1);
    expect(planNotifications([event()], [rule({ geofenceIds: [8] })], ctx).deliveries).toHaveLength(0);
    expect(planNotifications([event()], [rule({ geofenceIds: [7] })], ctx).deliveries).toHaveLength(1);
    // A kind without a geofence is not filtered by the rule's geofences.
    expect(planNotifications([event({ type: 'vehicle.panic', data: {} })], [rule({ events: ['vehicle.panic'], geofenceIds: [7] })], ctx).deliveries).toHaveLength(1);
  });

  it('keeps to its account and mode, and to events logged after it was made', () => {
    expect(planNotifications([event({ accountId: 11 })], [rule()], context()).deliveries).toHaveLength(0);
    expect(planNotifications([event({ mode: 'test' })], [rule()], context()).deliveries).toHaveLength(0);
    expect(planNotifications([event({ recordedAt: new Date('2025-12-31T00:00:00Z') })], [rule()], context()).deliveries).toHaveLength(0);
  });

  it('does not fire outside its schedule', () => {
    const nights = rule({ schedule: { days: [1, 2, 3, 4, 5, 6, 7], from: '22:00', to: '06:00' }, timezone: 'Europe/Madrid' });
    expect(planNotifications([event({ occurredAt: new Date('2026-11-27T12:00:00Z') })], [nights], context()).deliveries).toHaveLength(0);
    expect(planNotifications([event({ occurredAt: new Date('2026-11-27T23:00:00Z') })], [nights], context()).deliveries).toHaveLength(1);
  });

  it('notifies once per vehicle within the minimum interval, in a batch and across batches', () => {
    const burst = [0, 10, 20, 299, 300, 310].map((s) => event({ type: 'vehicle.alarm', occurredAt: new Date(Date.parse('2026-11-27T12:00:00Z') + s * 1000) }));
    const alarms = rule({ events: ['vehicle.alarm'], minIntervalS: 300 });
    const plan = planNotifications(burst, [alarms], context());
    expect(plan.deliveries.map((d) => d.eventId)).toEqual([burst[0]!.id, burst[4]!.id]);
    expect(plan.notified).toEqual([{ ruleId: 1, deviceId: 100, at: burst[4]!.occurredAt }]);
    // Another vehicle has its own interval.
    expect(planNotifications([burst[0]!, { ...burst[1]!, deviceId: 101 }], [alarms], context()).deliveries).toHaveLength(2);
    // A notification from an earlier batch counts.
    const earlier = context({ lastNotified: () => new Date('2026-11-27T11:58:00Z') });
    expect(planNotifications([burst[0]!], [alarms], earlier).deliveries).toHaveLength(0);
  });

  it('sends nothing to a muted user or a user who may not see the vehicle', () => {
    expect(planNotifications([event()], [rule()], context({ recipient: () => person({ active: false }) })).deliveries).toHaveLength(0);
    expect(planNotifications([event()], [rule()], context({ recipient: () => person({ mayReadDevice: () => false }) })).deliveries).toHaveLength(0);
    expect(planNotifications([event()], [rule()], context({ recipient: () => undefined })).deliveries).toHaveLength(0);
  });

  it('sends web push to each of the recipient\'s browsers, and one delivery to fail when they have none', () => {
    const push = rule({ recipients: [{ userId: 5, channels: ['push'] }] });
    expect(planNotifications([event()], [push], context({ recipient: () => person({ pushSubscriptionIds: [21, 22] }) })).deliveries.map((d) => d.pushSubscriptionId)).toEqual([21, 22]);
    expect(planNotifications([event()], [push], context()).deliveries.map((d) => d.pushSubscriptionId)).toEqual([null]);
  });

  it('sends an event once per recipient and channel however many rules take it', () => {
    const plan = planNotifications([event()], [rule(), rule({ id: 2, events: ['vehicle.geofence.enter'] })], context());
    expect(plan.deliveries).toHaveLength(1);
    expect(plan.deliveries[0]!.ruleId).toBe(1);
  });

  it('gives an event without a vehicle only to the user it belongs to', () => {
    const own = event({ type: 'command.failed', deviceId: null, userId: 6, data: {} });
    const r = rule({ events: ['command.*'], recipients: [{ userId: 5, channels: ['email'] }, { userId: 6, channels: ['email'] }] });
    expect(planNotifications([own], [r], context()).deliveries.map((d) => d.userId)).toEqual([6]);
  });

  it('refuses positions and webhook kinds', () => {
    expect(() => ruleEventPatterns(['vehicle.position'])).toThrow(/cannot be notified/);
    expect(() => ruleEventPatterns(['webhook.disabled'])).toThrow(/cannot be notified/);
    expect(() => ruleEventPatterns(['vehicle.nothing'])).toThrow(/unknown event type/);
    expect(ruleEventPatterns(['vehicle.geofence.*']).prefixes).toEqual(['vehicle.geofence.']);
  });
});
