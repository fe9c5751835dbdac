import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { recordAudit } from '../../db/audit-log.ts';
import { inTransaction, type Db } from '../../db/database.ts';
import {
  checkRuleGeofences, checkRuleGroups, checkRuleRecipients, deleteNotificationRule, findNotificationRule, insertNotificationRule, notificationRulePage,
  recipientUsers, ruleDeliveryPage, ruleDeviceIds, updateNotificationRule, type NotificationRuleFields, type NotificationRuleRow,
} from '../../db/notification-rules.ts';
import type { AccessScope } from '../../db/access-scope.ts';
import { inField } from '../../domain/domain-error.ts';
import { NOTIFICATION_CHANNELS, ruleEventPatterns, type NotificationChannel, type NotificationRecipient } from '../../domain/notifications/notification-rule.ts';
import { normaliseSchedule } from '../../domain/notifications/notification-schedule.ts';
import { isValidTimeZone } from '../../domain/time/zoned-time.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { auditActor } from '../audit-actor.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import { decodeIdCursor, idPage } from '../pagination/id-cursor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { NotificationRuleSchema, RuleDeliverySchema, ScheduleSchema, notificationRuleView, ruleDeliveryView } from '../views/notification-view.ts';

/** Rules one account may have in each mode: each is read for every event of the account. */
export const RULES_PER_ACCOUNT = 200;
const MAX_SERIAL_ID = 2_147_483_647;
const MAX_LIST = 1000;
const TAG = ['Notifications'];
const NOT_FOUND = (id: number) => `Notification rule not found: ${id}`;
const noNul = (s: string) => !s.includes('\u0000');
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

const id = z.coerce.number().int().min(1).max(MAX_SERIAL_ID).openapi({ param: { name: 'id', in: 'path' }, example: 4 });
const serialIds = z.array(z.number().int().min(1).max(MAX_SERIAL_ID)).max(MAX_LIST);

const fields = {
  name: z.string().trim().min(1, 'name must not be empty').max(200).refine(noNul, 'name must not contain NUL characters').openapi({ description: '1 to 200 characters', example: 'Depot arrivals' }),
  events: z.array(z.string().max(100)).min(1).max(50).openapi({
    description: 'Event kinds, or families by a trailing * (vehicle.geofence.*); not vehicle.position, webhook.disabled or webhook.test',
    example: ['vehicle.geofence.enter', 'vehicle.panic'],
  }),
  vehicles: z.object({
    scope: z.enum(['all', 'groups', 'list']),
    groupIds: serialIds.optional().openapi({ description: 'With scope groups (and only then): vehicle groups of the account and mode', example: [3] }),
    vehicleIds: z.array(z.string().min(1).max(64).refine(noNul, 'vehicle ids must not contain NUL characters')).max(MAX_LIST).optional()
      .openapi({ description: 'With scope list (and only then): vehicles of the account and mode by IMEI', example: ['356307042441013'] }),
  }).strict().openapi({ description: '{"scope": "all"}, {"scope": "groups", "groupIds": [...]} or {"scope": "list", "vehicleIds": [...]}', example: { scope: 'groups', groupIds: [3] } }),
  geofenceIds: serialIds.nullable().openapi({ description: 'Only events at these geofences of the account and mode, for kinds that name a geofence (other kinds pass); null: any', example: [12] }),
  schedule: z.union([ScheduleSchema, z.null()]).openapi({ description: 'Notify only on these days between these times, in the rule\'s timezone; null: at any time' }),
  timezone: z.string().max(100).refine(isValidTimeZone, 'timezone must be an IANA time zone such as America/Mexico_City')
    .openapi({ description: 'IANA time zone of the schedule; default the calling user\'s', example: 'America/Mexico_City' }),
  minIntervalSeconds: z.number().int().min(0).max(31_536_000)
    .openapi({ description: 'At most one notification per vehicle in this many seconds (a flapping alarm notifies once); default 0: every event', example: 600 }),
  recipients: z.array(z.object({
    userId: z.number().int().min(1).max(MAX_SERIAL_ID).openapi({ example: 9 }),
    channels: z.array(z.enum(NOTIFICATION_CHANNELS)).max(NOTIFICATION_CHANNELS.length * 2).openapi({ example: ['email', 'push'] }),
  }).strict()).min(1).max(100).openapi({ description: 'Current users of the account, each on the channels chosen; at least one with a channel' }),
  enabled: z.boolean().openapi({ description: 'false: the rule notifies nobody until enabled again; default true' }),
};

const CreateBody = z.object({
  name: fields.name, events: fields.events, vehicles: fields.vehicles, geofenceIds: fields.geofenceIds.optional(), schedule: fields.schedule.optional(),
  timezone: fields.timezone.optional(), minIntervalSeconds: fields.minIntervalSeconds.optional(), recipients: fields.recipients, enabled: fields.enabled.optional(),
}).strict().openapi('NotificationRuleCreate');

const PatchBody = z.object({
  name: fields.name.optional(), events: fields.events.optional(), vehicles: fields.vehicles.optional(), geofenceIds: fields.geofenceIds.optional(),
  schedule: fields.schedule.optional(), timezone: fields.timezone.optional(), minIntervalSeconds: fields.minIntervalSeconds.optional(),
  recipients: fields.recipients.optional(), enabled: fields.enabled.optional(),
}).strict().openapi('NotificationRuleUpdate');

type Body = z.infer<typeof PatchBody>;

const listPage = <T extends z.ZodType>(item: T, name: string) =>
  z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() }).openapi(name);
const pageQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(50).openapi({ description: '1 to 100, default 50' }),
  cursor: z.string().optional().openapi({ description: 'next_cursor of the previous page' }),
};

const BAD_BODY = 'Invalid field: an unknown or refused event kind, a schedule time that is not HH:mm, an unknown timezone, a group, geofence or vehicle not in the account and mode, a recipient who is not a current user of the account, or no recipient with a channel';

const routes = {
  list: createRoute({
    method: 'get', path: '/notification-rules', tags: TAG, summary: 'The account\'s notification rules of the key\'s mode, oldest first',
    middleware: [requirePermission('notifications:read')] as const,
    request: { query: z.object(pageQuery) },
    responses: { 200: { description: 'A page of rules', content: json(listPage(NotificationRuleSchema, 'NotificationRulePage')) }, ...errorResponses([400, 'Invalid limit or cursor']) },
  }),
  get: createRoute({
    method: 'get', path: '/notification-rules/{id}', tags: TAG, summary: 'One notification rule',
    middleware: [requirePermission('notifications:read')] as const,
    request: { params: z.object({ id }) },
    responses: {
      200: { description: 'The rule', content: json(envelopeSchema(NotificationRuleSchema, 'NotificationRuleResponse')) },
      ...errorResponses([400, 'Invalid id'], [404, 'No such rule in the account and the key\'s mode']),
    },
  }),
  create: createRoute({
    method: 'post', path: '/notification-rules', tags: TAG, summary: 'Create a notification rule',
    description: `Which events (kinds or families), about which vehicles, at which geofences, when, how often per vehicle, and to whom on which channels. A recipient is notified only about vehicles they may see, on channels they have an address for (GET /users/me/notification-channels). Audited as \`notification_rule.created\`. At most ${RULES_PER_ACCOUNT} rules per account and mode.`,
    middleware: [requirePermission('notifications:write')] as const,
    request: { body: { content: json(CreateBody), required: true } },
    responses: {
      201: { description: 'The rule', content: json(envelopeSchema(NotificationRuleSchema, 'NotificationRuleCreated')) },
      ...errorResponses([400, BAD_BODY], [409, `The account already has ${RULES_PER_ACCOUNT} rules in this mode`], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  patch: createRoute({
    method: 'patch', path: '/notification-rules/{id}', tags: TAG, summary: 'Change a notification rule',
    description: 'Only the fields given change; `vehicles`, `events` and `recipients` replace the old ones whole. Audited as `notification_rule.updated`.',
    middleware: [requirePermission('notifications:write')] as const,
    request: { params: z.object({ id }), body: { content: json(PatchBody), required: true } },
    responses: {
      200: { description: 'The rule', content: json(envelopeSchema(NotificationRuleSchema, 'NotificationRuleUpdated')) },
      ...errorResponses([400, BAD_BODY], [404, 'No such rule in the account and the key\'s mode'], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  remove: createRoute({
    method: 'delete', path: '/notification-rules/{id}', tags: TAG, summary: 'Delete a notification rule and its delivery log',
    description: 'Deliveries not yet sent are dropped. Audited as `notification_rule.deleted`.',
    middleware: [requirePermission('notifications:write')] as const,
    request: { params: z.object({ id }) },
    responses: { 204: { description: 'Deleted' }, ...errorResponses([400, 'Invalid id'], [404, 'No such rule in the account and the key\'s mode']) },
  }),
  deliveries: createRoute({
    method: 'get', path: '/notification-rules/{id}/deliveries', tags: TAG, summary: 'The rule\'s deliveries, newest first',
    description: 'One per event, recipient and channel (and browser, for web push), with its attempts and outcome. Kept for NOTIFICATION_DELIVERY_RETENTION_DAYS (30 by default).',
    middleware: [requirePermission('notifications:read')] as const,
    request: { params: z.object({ id }), query: z.object(pageQuery) },
    responses: {
      200: { description: 'A page of deliveries', content: json(listPage(RuleDeliverySchema, 'NotificationDeliveryPage')) },
      ...errorResponses([400, 'Invalid id, limit or cursor'], [404, 'No such rule in the account and the key\'s mode']),
    },
  }),
};

/** The event patterns as stored: trimmed, blanks and repeats dropped, each one a kind a rule may take. */
function checkedEvents(events: string[]): string[] {
  const names = [...new Set(events.map((e) => e.trim()).filter(Boolean))];
  inField('events', () => ruleEventPatterns(names));
  return names;
}

/** Repeats of a user merged, channels without repeats; at least one recipient on a channel. */
function checkedRecipients(recipients: Array<{ userId: number; channels: NotificationChannel[] }>): NotificationRecipient[] {
  const byUser = new Map<number, Set<NotificationChannel>>();
  for (const r of recipients) {
    const channels = byUser.get(r.userId) ?? new Set();
    for (const channel of r.channels) channels.add(channel);
    byUser.set(r.userId, channels);
  }
  const merged = [...byUser].map(([userId, channels]) => ({ userId, channels: NOTIFICATION_CHANNELS.filter((c) => channels.has(c)) }));
  if (!merged.some((r) => r.channels.length > 0)) throw new ApiError(400, 'recipients: at least one recipient needs a channel (email, push, telegram or sms)');
  return merged;
}

/** The rule's vehicles as stored; every group and vehicle named must be the account's, of the key's mode. */
async function checkedVehicles(db: Db, scope: AccessScope, vehicles: NonNullable<Body['vehicles']>): Promise<Pick<NotificationRuleFields, 'vehicleScope' | 'groupIds' | 'deviceIds'>> {
  const { groupIds, vehicleIds } = vehicles;
  if (vehicles.scope !== 'groups' && groupIds !== undefined) throw new ApiError(400, `vehicles.groupIds goes only with scope "groups", not "${vehicles.scope}"`);
  if (vehicles.scope !== 'list' && vehicleIds !== undefined) throw new ApiError(400, `vehicles.vehicleIds goes only with scope "list", not "${vehicles.scope}"`);
  if (vehicles.scope === 'groups') {
    const ids = [...new Set(groupIds ?? [])];
    if (ids.length === 0) throw new ApiError(400, 'vehicles.groupIds must name at least one group with scope "groups"');
    await checkRuleGroups(db, scope, ids);
    return { vehicleScope: 'groups', groupIds: ids.sort((a, b) => a - b), deviceIds: [] };
  }
  if (vehicles.scope === 'list') {
    const imeis = [...new Set(vehicleIds ?? [])];
    if (imeis.length === 0) throw new ApiError(400, 'vehicles.vehicleIds must name at least one vehicle with scope "list"');
    return { vehicleScope: 'list', groupIds: [], deviceIds: await ruleDeviceIds(db, scope, imeis) };
  }
  return { vehicleScope: 'all', groupIds: [], deviceIds: [] };
}

/** The fields of the body, checked and as stored; those absent stay absent. */
async function checkedFields(db: Db, scope: AccessScope, body: Body): Promise<Partial<NotificationRuleFields>> {
  const checked: Partial<NotificationRuleFields> = {};
  if (body.name !== undefined) checked.name = body.name;
  if (body.events !== undefined) checked.events = checkedEvents(body.events);
  if (body.vehicles !== undefined) Object.assign(checked, await checkedVehicles(db, scope, body.vehicles));
  if (body.geofenceIds !== undefined) {
    checked.geofenceIds = body.geofenceIds === null ? null : [...new Set(body.geofenceIds)].sort((a, b) => a - b);
    if (checked.geofenceIds !== null) await checkRuleGeofences(db, scope, checked.geofenceIds);
  }
  if (body.schedule !== undefined) checked.schedule = body.schedule === null ? null : inField('schedule', () => normaliseSchedule(body.schedule!));
  if (body.timezone !== undefined) checked.timezone = body.timezone;
  if (body.minIntervalSeconds !== undefined) checked.minIntervalS = body.minIntervalSeconds;
  if (body.recipients !== undefined) {
    checked.recipients = checkedRecipients(body.recipients);
    await checkRuleRecipients(db, scope.accountId, checked.recipients.map((r) => r.userId));
  }
  if (body.enabled !== undefined) checked.enabled = body.enabled;
  return checked;
}

/**
 * /notification-rules: the account's rules of the key's mode, under notifications:read and
 * notifications:write (docs/api/notifications.md). Like groups and geofences they are the account's,
 * not one user's: a rule names its recipients, and each recipient gets only what they may see.
 */
export function notificationRuleRoutes({ db }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();
  type Caller = Parameters<typeof auditActor>[0];
  const views = async (c: Caller, rows: NotificationRuleRow[]) => {
    const { scope, timezone } = c.get('principal');
    const users = await recipientUsers(db, scope.accountId, rows.flatMap((r) => r.recipients.map((x) => x.userId)));
    return (row: NotificationRuleRow) => notificationRuleView(row, users, timezone);
  };
  const view = async (c: Caller, row: NotificationRuleRow) => (await views(c, [row]))(row);
  const owned = async (scope: AccessScope, ruleId: number) => {
    const rule = await findNotificationRule(db, scope, ruleId);
    if (!rule) throw new ApiError(404, NOT_FOUND(ruleId));
    return rule;
  };

  app.openapi(routes.list, async (c) => {
    const { limit, cursor } = c.req.valid('query');
    const after = cursor === undefined ? 0 : Number(decodeIdCursor('notification-rules', cursor, BigInt(MAX_SERIAL_ID)));
    const rows = await notificationRulePage(db, c.get('principal').scope, after, limit);
    return c.json(idPage('notification-rules', rows, limit, await views(c, rows)), 200);
  });

  app.openapi(routes.get, async (c) => c.json(envelope(await view(c, await owned(c.get('principal').scope, c.req.valid('param').id))), 200));

  app.openapi(routes.create, async (c) => {
    const { scope, timezone } = c.get('principal');
    const body = c.req.valid('json');
    const checked = await checkedFields(db, scope, body);
    const fields: NotificationRuleFields = {
      name: checked.name!, events: checked.events!, vehicleScope: checked.vehicleScope!, groupIds: checked.groupIds!, deviceIds: checked.deviceIds!,
      geofenceIds: checked.geofenceIds ?? null, schedule: checked.schedule ?? null, timezone: checked.timezone ?? timezone,
      minIntervalS: checked.minIntervalS ?? 0, recipients: checked.recipients!, enabled: checked.enabled ?? true,
    };
    const row = await inTransaction(db, async (trx) => {
      const created = await insertNotificationRule(trx, scope, fields, RULES_PER_ACCOUNT);
      if (!created) throw new ApiError(409, `An account may have at most ${RULES_PER_ACCOUNT} notification rules in each mode, and this one has them all; delete one first (DELETE /notification-rules/{id})`);
      await recordAudit(trx, auditActor(c), { action: 'notification_rule.created', targetType: 'notification_rule', targetId: String(created.id), details: { name: fields.name, events: fields.events } });
      return created;
    });
    return c.json(envelope(await view(c, row)), 201);
  });

  app.openapi(routes.patch, async (c) => {
    const { scope } = c.get('principal');
    const ruleId = c.req.valid('param').id;
    const body = c.req.valid('json');
    await owned(scope, ruleId);
    const changes = await checkedFields(db, scope, body);
    const row = await inTransaction(db, async (trx) => {
      const updated = await updateNotificationRule(trx, scope, ruleId, changes);
      if (updated) await recordAudit(trx, auditActor(c), { action: 'notification_rule.updated', targetType: 'notification_rule', targetId: String(ruleId), details: { changed: Object.keys(body) } });
      return updated;
    });
    if (!row) throw new ApiError(404, NOT_FOUND(ruleId));
    return c.json(envelope(await view(c, row)), 200);
  });

  app.openapi(routes.remove, async (c) => {
    const ruleId = c.req.valid('param').id;
    const deleted = await inTransaction(db, async (trx) => {
      const gone = await deleteNotificationRule(trx, c.get('principal').scope, ruleId);
      if (gone) await recordAudit(trx, auditActor(c), { action: 'notification_rule.deleted', targetType: 'notification_rule', targetId: String(ruleId) });
      return gone;
    });
    if (!deleted) throw new ApiError(404, NOT_FOUND(ruleId));
    return c.body(null, 204);
  });

  app.openapi(routes.deliveries, async (c) => {
    const { scope, timezone } = c.get('principal');
    const rule = await owned(scope, c.req.valid('param').id);
    const { limit, cursor } = c.req.valid('query');
    const before = cursor === undefined ? undefined : decodeIdCursor('notification-deliveries', cursor);
    const rows = await ruleDeliveryPage(db, rule.id, { beforeId: before, limit });
    return c.json(idPage('notification-deliveries', rows, limit, (row) => ruleDeliveryView(row, timezone)), 200);
  });

  return app;
}
