import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { inTransaction } from '../../db/database.ts';
import {
  deleteReportSubscription, findReportSubscription, insertReportSubscription, reportSubscriptionsOf, updateReportSubscription, type ReportSubscriptionFields,
} from '../../db/report-subscriptions.ts';
import { grants } from '../../domain/access/permissions.ts';
import { REPORT_KINDS, nextReportRun } from '../../domain/notifications/report-schedule.ts';
import { isValidTimeZone } from '../../domain/time/zoned-time.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import type { RouteDeps } from '../route-deps.ts';
import { ReportSubscriptionSchema, reportSubscriptionView } from '../views/notification-view.ts';

/** Summaries one user may subscribe to, in both modes together. */
export const REPORT_SUBSCRIPTIONS_PER_USER = 10;
const MAX_SERIAL_ID = 2_147_483_647;
const TAG = ['Notifications'];
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });
const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;

const id = z.coerce.number().int().min(1).max(MAX_SERIAL_ID).openapi({ param: { name: 'id', in: 'path' }, example: 2 });

const fields = {
  frequency: z.enum(['daily', 'weekly']).openapi({ description: 'daily: each day, about the day before; weekly: on `weekday`, about the 7 days before' }),
  reports: z.array(z.enum(REPORT_KINDS)).min(1).max(REPORT_KINDS.length * 2)
    .openapi({ description: 'One CSV attachment each: trips, geofences (visits), maintenance (needs maintenance:read)', example: ['trips', 'geofences'] }),
  time: z.string().regex(HH_MM, 'time must be HH:mm (00:00 to 23:59)').openapi({ description: 'HH:mm in `timezone`', example: '07:00' }),
  weekday: z.number().int().min(1).max(7).nullable().openapi({ description: 'ISO weekday (1 = Monday … 7 = Sunday); needed for weekly, null for daily', example: 1 }),
  timezone: z.string().max(100).refine(isValidTimeZone, 'timezone must be an IANA time zone such as America/Mexico_City')
    .openapi({ description: 'Default the calling user\'s', example: 'America/Mexico_City' }),
  enabled: z.boolean().openapi({ description: 'false: nothing is sent until enabled again; default true' }),
};

const CreateBody = z.object({
  frequency: fields.frequency, reports: fields.reports, time: fields.time, weekday: fields.weekday.optional(), timezone: fields.timezone.optional(), enabled: fields.enabled.optional(),
}).strict().openapi('ReportSubscriptionCreate');
const PatchBody = z.object({
  frequency: fields.frequency.optional(), reports: fields.reports.optional(), time: fields.time.optional(), weekday: fields.weekday.optional(),
  timezone: fields.timezone.optional(), enabled: fields.enabled.optional(),
}).strict().openapi('ReportSubscriptionUpdate');

const BAD_BODY = 'Invalid field: an unknown report, a time that is not HH:mm, a weekly one without weekday or a daily one with one, an unknown timezone';
const NOT_FOUND = 'No such subscription of the user in the key\'s mode';
const OWN = 'A user\'s own, in the key\'s mode (a summary reports the vehicles of its mode); no permission needed.';

const routes = {
  list: createRoute({
    method: 'get', path: '/users/me/report-subscriptions', tags: TAG, summary: 'My scheduled report emails',
    description: OWN,
    responses: { 200: { description: 'The subscriptions, oldest first', content: json(envelopeSchema(z.array(ReportSubscriptionSchema), 'ReportSubscriptionList')) }, ...selfErrorResponses() },
  }),
  create: createRoute({
    method: 'post', path: '/users/me/report-subscriptions', tags: TAG, summary: 'Subscribe to a daily or weekly report email',
    description: `An email to the user's notification address with one CSV per report and a short summary, about the vehicles the user may see. Needs reports:read, and maintenance:read for the maintenance report. At most ${REPORT_SUBSCRIPTIONS_PER_USER} per user.`,
    middleware: [requirePermission('reports:read')] as const,
    request: { body: { content: json(CreateBody), required: true } },
    responses: {
      201: { description: 'The subscription with its next run', content: json(envelopeSchema(ReportSubscriptionSchema, 'ReportSubscriptionCreated')) },
      ...errorResponses([400, BAD_BODY], [403, 'The key lacks reports:read, or maintenance:read for the maintenance report'],
        [409, `The user has ${REPORT_SUBSCRIPTIONS_PER_USER} subscriptions already`], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  patch: createRoute({
    method: 'patch', path: '/users/me/report-subscriptions/{id}', tags: TAG, summary: 'Change one of my report emails',
    description: 'Only the fields given change; a change of timing (or enabling it) sets the next run from now. Needs reports:read, and maintenance:read for the maintenance report.',
    middleware: [requirePermission('reports:read')] as const,
    request: { params: z.object({ id }), body: { content: json(PatchBody), required: true } },
    responses: {
      200: { description: 'The subscription', content: json(envelopeSchema(ReportSubscriptionSchema, 'ReportSubscriptionUpdated')) },
      ...errorResponses([400, BAD_BODY], [403, 'The key lacks reports:read, or maintenance:read for the maintenance report'], [404, NOT_FOUND], [413, 'Body too large'], [415, 'Not JSON']),
    },
  }),
  remove: createRoute({
    method: 'delete', path: '/users/me/report-subscriptions/{id}', tags: TAG, summary: 'Unsubscribe from one of my report emails',
    description: OWN,
    request: { params: z.object({ id }) },
    responses: { 204: { description: 'Deleted' }, ...selfErrorResponses([400, 'Invalid id'], [404, NOT_FOUND]) },
  }),
};

/** The answers of a user's own endpoints open to any credential: no 403. */
function selfErrorResponses(...extra: Array<[number, string]>) {
  const responses = errorResponses(...extra);
  delete responses[403];
  return responses;
}

type Timing = Pick<ReportSubscriptionFields, 'frequency' | 'reports' | 'localTime' | 'weekday' | 'timezone'>;

/** The subscription's timing and reports, checked together, and the credential allowed to read them. */
function checkedTiming(t: Timing, permissions: readonly string[]): Timing {
  if (t.frequency === 'weekly' && t.weekday === null) throw new ApiError(400, 'weekday is needed for a weekly report (1 = Monday … 7 = Sunday)');
  if (t.frequency === 'daily' && t.weekday !== null) throw new ApiError(400, 'weekday goes only with a weekly report; leave it out (or null) for a daily one');
  const reports = REPORT_KINDS.filter((k) => t.reports.includes(k));
  if (reports.includes('maintenance') && !grants(permissions, 'maintenance:read')) {
    throw new ApiError(403, 'This API key lacks the maintenance:read permission, which the maintenance report needs');
  }
  return { ...t, reports };
}

/** /users/me/report-subscriptions: the caller's own scheduled summaries by email (docs/api/notifications.md). */
export function reportSubscriptionRoutes({ db }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();

  app.openapi(routes.list, async (c) => {
    const { scope, timezone } = c.get('principal');
    return c.json(envelope((await reportSubscriptionsOf(db, scope)).map((s) => reportSubscriptionView(s, timezone))), 200);
  });

  app.openapi(routes.create, async (c) => {
    const { scope, timezone, permissions } = c.get('principal');
    const body = c.req.valid('json');
    const timing = checkedTiming({
      frequency: body.frequency, reports: body.reports, localTime: body.time, weekday: body.weekday ?? null, timezone: body.timezone ?? timezone,
    }, permissions);
    const nextRunAt = nextReportRun(timing, new Date());
    const row = await inTransaction(db, (trx) => insertReportSubscription(trx, scope, { ...timing, enabled: body.enabled ?? true, nextRunAt }, REPORT_SUBSCRIPTIONS_PER_USER));
    if (!row) throw new ApiError(409, `A user may have at most ${REPORT_SUBSCRIPTIONS_PER_USER} report subscriptions, and this one has them all; delete one first (DELETE /users/me/report-subscriptions/{id})`);
    return c.json(envelope(reportSubscriptionView(row, timezone)), 201);
  });

  app.openapi(routes.patch, async (c) => {
    const { scope, timezone, permissions } = c.get('principal');
    const subscriptionId = c.req.valid('param').id;
    const body = c.req.valid('json');
    const existing = await findReportSubscription(db, scope, subscriptionId);
    if (!existing) throw new ApiError(404, `Report subscription not found: ${subscriptionId}`);
    // A daily one made weekly takes the weekday given; a weekly one made daily drops its own.
    const frequency = body.frequency ?? existing.frequency;
    const weekday = body.weekday !== undefined ? body.weekday : frequency === 'daily' && body.frequency === 'daily' ? null : existing.weekday;
    const timing = checkedTiming({
      frequency, reports: body.reports ?? existing.reports, localTime: body.time ?? existing.local_time, weekday, timezone: body.timezone ?? existing.timezone,
    }, permissions);
    const retimed = body.frequency !== undefined || body.time !== undefined || body.weekday !== undefined || body.timezone !== undefined || (body.enabled === true && !existing.enabled);
    const row = await updateReportSubscription(db, scope, subscriptionId, {
      ...timing, enabled: body.enabled, nextRunAt: retimed ? nextReportRun(timing, new Date()) : undefined,
    });
    if (!row) throw new ApiError(404, `Report subscription not found: ${subscriptionId}`);
    return c.json(envelope(reportSubscriptionView(row, timezone)), 200);
  });

  app.openapi(routes.remove, async (c) => {
    const subscriptionId = c.req.valid('param').id;
    if (!(await deleteReportSubscription(db, c.get('principal').scope, subscriptionId))) throw new ApiError(404, `Report subscription not found: ${subscriptionId}`);
    return c.body(null, 204);
  });

  return app;
}
