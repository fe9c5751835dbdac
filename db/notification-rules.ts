import { sql, type Selectable } from 'kysely';
import type { NotificationRecipient, VehicleScope } from '../domain/notifications/notification-rule.ts';
import type { NotificationSchedule } from '../domain/notifications/notification-schedule.ts';
import { DomainError } from '../domain/domain-error.ts';
import type { AccessScope } from './access-scope.ts';
import type { Db } from './database.ts';
import type { NotificationDeliveriesTable, NotificationRulesTable } from './schema.ts';

// An account's notification rules, per mode as its vehicles, groups and geofences are: any key of
// the account and mode holding notifications:* manages them (unlike webhooks, which are their user's).

/** The first key of the advisory lock that makes an account's new rules take turns (the second is the account id). */
const RULE_LIMIT_LOCK = 0x6e7275;

/** A rule as the API gives it, its vehicles already turned into device ids. */
export interface NotificationRuleFields {
  name: string;
  events: string[];
  vehicleScope: VehicleScope;
  groupIds: number[];
  deviceIds: number[];
  geofenceIds: number[] | null;
  schedule: NotificationSchedule | null;
  timezone: string;
  minIntervalS: number;
  recipients: NotificationRecipient[];
  enabled: boolean;
}

/** A rule as read back: the row and the IMEIs of its listed vehicles (a vehicle deleted since is left out). */
export type NotificationRuleRow = Selectable<NotificationRulesTable> & { imeis: string[] };

/** The scope's rules, each with its vehicles' IMEIs. */
function rules(db: Db, scope: AccessScope) {
  return db
    .selectFrom('notification_rules as r')
    .selectAll('r')
    .select(sql<string[]>`coalesce((SELECT array_agg(d.imei ORDER BY d.imei) FROM devices d WHERE d.id = ANY(r.device_ids)), '{}')`.as('imeis'))
    .where('r.account_id', '=', scope.accountId)
    .where('r.mode', '=', scope.mode);
}

/** The columns of the fields given, for an update. */
function columns(rule: Partial<NotificationRuleFields>) {
  return {
    ...(rule.name !== undefined ? { name: rule.name } : {}),
    ...(rule.events !== undefined ? { events: rule.events } : {}),
    ...(rule.vehicleScope !== undefined ? { vehicle_scope: rule.vehicleScope } : {}),
    ...(rule.groupIds !== undefined ? { group_ids: rule.groupIds } : {}),
    ...(rule.deviceIds !== undefined ? { device_ids: rule.deviceIds } : {}),
    ...(rule.geofenceIds !== undefined ? { geofence_ids: rule.geofenceIds } : {}),
    ...(rule.schedule !== undefined ? { schedule: rule.schedule === null ? null : JSON.stringify(rule.schedule) } : {}),
    ...(rule.timezone !== undefined ? { timezone: rule.timezone } : {}),
    ...(rule.minIntervalS !== undefined ? { min_interval_s: rule.minIntervalS } : {}),
    ...(rule.recipients !== undefined ? { recipients: JSON.stringify(rule.recipients) } : {}),
    ...(rule.enabled !== undefined ? { enabled: rule.enabled } : {}),
  };
}

/**
 * Adds a rule unless the account already has `limit` in the scope's mode (undefined then). Call it in
 * a transaction: two additions racing for the last place take turns on a lock held until the commit.
 */
export async function insertNotificationRule(db: Db, scope: AccessScope, rule: NotificationRuleFields, limit: number): Promise<NotificationRuleRow | undefined> {
  await sql`SELECT pg_advisory_xact_lock(${RULE_LIMIT_LOCK}::int, ${scope.accountId}::int)`.execute(db);
  const { n } = await db
    .selectFrom('notification_rules')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('account_id', '=', scope.accountId).where('mode', '=', scope.mode)
    .executeTakeFirstOrThrow();
  if (n >= limit) return undefined;
  const { id } = await db
    .insertInto('notification_rules')
    .values({
      account_id: scope.accountId, mode: scope.mode, created_by: scope.userId, name: rule.name, events: rule.events, vehicle_scope: rule.vehicleScope,
      group_ids: rule.groupIds, device_ids: rule.deviceIds, geofence_ids: rule.geofenceIds, schedule: rule.schedule === null ? null : JSON.stringify(rule.schedule),
      timezone: rule.timezone, min_interval_s: rule.minIntervalS, recipients: JSON.stringify(rule.recipients), enabled: rule.enabled,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return findNotificationRule(db, scope, id);
}

export async function findNotificationRule(db: Db, scope: AccessScope, id: number): Promise<NotificationRuleRow | undefined> {
  return rules(db, scope).where('r.id', '=', id).executeTakeFirst();
}

/** A page of the account's rules of the scope's mode by id, `limit + 1` rows so the caller can tell whether more follow. */
export async function notificationRulePage(db: Db, scope: AccessScope, afterId: number, limit: number): Promise<NotificationRuleRow[]> {
  return rules(db, scope).where('r.id', '>', afterId).orderBy('r.id').limit(limit + 1).execute();
}

/** Changes the fields given; undefined when the rule is not the scope's. */
export async function updateNotificationRule(db: Db, scope: AccessScope, id: number, changes: Partial<NotificationRuleFields>): Promise<NotificationRuleRow | undefined> {
  const result = await db
    .updateTable('notification_rules')
    .set({ ...columns(changes), updated_at: new Date() })
    .where('account_id', '=', scope.accountId).where('mode', '=', scope.mode).where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0 ? findNotificationRule(db, scope, id) : undefined;
}

/** Deletes the rule with its delivery log (ON DELETE CASCADE). */
export async function deleteNotificationRule(db: Db, scope: AccessScope, id: number): Promise<boolean> {
  const result = await db.deleteFrom('notification_rules').where('account_id', '=', scope.accountId).where('mode', '=', scope.mode).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The account's groups of the scope's mode among `ids`; an unknown one is refused naming the field and the id. */
export async function checkRuleGroups(db: Db, scope: AccessScope, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  const rows = await db.selectFrom('vehicle_groups').select('id').where('account_id', '=', scope.accountId).where('mode', '=', scope.mode).where('id', 'in', ids).execute();
  const unknown = missing(ids, rows.map((r) => r.id));
  if (unknown.length > 0) throw new DomainError('invalid', `vehicles.groupIds: no ${scope.mode} group ${unknown.join(', ')} in this account`);
}

export async function checkRuleGeofences(db: Db, scope: AccessScope, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  const rows = await db.selectFrom('geofences').select('id').where('account_id', '=', scope.accountId).where('mode', '=', scope.mode).where('id', 'in', ids).execute();
  const unknown = missing(ids, rows.map((r) => r.id));
  if (unknown.length > 0) throw new DomainError('invalid', `geofenceIds: no ${scope.mode} geofence ${unknown.join(', ')} in this account`);
}

/** The device ids of the account's vehicles of the scope's mode named by IMEI; an unknown one is refused. */
export async function ruleDeviceIds(db: Db, scope: AccessScope, imeis: string[]): Promise<number[]> {
  if (imeis.length === 0) return [];
  const rows = await db.selectFrom('devices').select(['id', 'imei']).where('account_id', '=', scope.accountId).where('mode', '=', scope.mode).where('imei', 'in', imeis).execute();
  const unknown = missing(imeis, rows.map((r) => r.imei));
  if (unknown.length > 0) throw new DomainError('invalid', `vehicles.vehicleIds: no ${scope.mode} vehicle ${unknown.map((v) => `"${v}"`).join(', ')} in this account`);
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

/** Recipients must be current users of the account: a removed user or another account's is refused. */
export async function checkRuleRecipients(db: Db, accountId: number, userIds: number[]): Promise<void> {
  const rows = await db.selectFrom('users').select('id').where('account_id', '=', accountId).where('removed_at', 'is', null).where('id', 'in', userIds).execute();
  const unknown = missing(userIds, rows.map((r) => r.id));
  if (unknown.length > 0) throw new DomainError('invalid', `recipients: user ${unknown.join(', ')} is not a user of this account`);
}

function missing<T>(wanted: T[], found: T[]): T[] {
  const known = new Set(found);
  return [...new Set(wanted)].filter((w) => !known.has(w));
}

/** Name and email of the users a rule or delivery names, removed ones included (their rules still show them). */
export async function recipientUsers(db: Db, accountId: number, userIds: number[]): Promise<Map<number, { name: string | null; email: string }>> {
  const unique = [...new Set(userIds)];
  if (unique.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'name', 'email']).where('account_id', '=', accountId).where('id', 'in', unique).execute();
  return new Map(rows.map((r) => [r.id, { name: r.name, email: r.email }]));
}

export type RuleDeliveryRow = Selectable<NotificationDeliveriesTable> & { user_name: string | null; user_email: string | null };

/** A page of a rule's deliveries, newest first (`before` an id), `limit + 1` rows. */
export async function ruleDeliveryPage(db: Db, ruleId: number, page: { beforeId?: string; limit: number }): Promise<RuleDeliveryRow[]> {
  return db
    .selectFrom('notification_deliveries as d')
    .leftJoin('users as u', 'u.id', 'd.user_id')
    .selectAll('d')
    .select(['u.name as user_name', 'u.email as user_email'])
    .where('d.rule_id', '=', ruleId)
    .$if(page.beforeId !== undefined, (q) => q.where(sql<boolean>`d.id < ${page.beforeId}::bigint`))
    .orderBy('d.id', 'desc')
    .limit(page.limit + 1)
    .execute();
}
