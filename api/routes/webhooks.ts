import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import {
  deleteWebhook, deliveryAttempts, deliveryPage, findDelivery, findWebhook, insertTestDelivery, insertWebhook, retryDelivery,
  rotateWebhookSecret, updateWebhook, webhookPage,
} from '../../db/webhooks.ts';
import { inField } from '../../domain/domain-error.ts';
import { parseEventTypePatterns } from '../../domain/events/event-catalog.ts';
import { webhookTestPayload } from '../../domain/events/event-payloads.ts';
import { newWebhookSecret } from '../../engine/webhooks/webhook-secret.ts';
import { checkWebhookUrl } from '../../engine/webhooks/webhook-url.ts';
import { recordAudit } from '../../db/audit-log.ts';
import { inTransaction } from '../../db/database.ts';
import { ApiError } from '../api-error.ts';
import { auditActor } from '../audit-actor.ts';
import type { AppEnv } from '../app-env.ts';
import { grants } from '../../domain/access/permissions.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import { decodeIdCursor, idPage } from '../pagination/id-cursor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { AttemptSchema, DeliverySchema, WebhookSchema, WebhookWithSecretSchema, attemptView, deliveryView, webhookView } from '../views/webhook-view.ts';

const ROTATION_OVERLAP_MS = 24 * 3_600_000;
const DEFAULT_WEBHOOKS_PER_USER = 20;
const MAX_PATTERNS = 50;
const MAX_SERIAL_ID = 2_147_483_647;
const MAX_BIGINT_ID = 9_223_372_036_854_775_807n;

/** How a receiver checks a delivery; the Webhooks tag's description in the OpenAPI document. */
export const WEBHOOK_SIGNING = [
  'Deliveries are signed as the Standard Webhooks specification defines: headers `webhook-id` (the event id, `test_<delivery id>` for a ping; the same on every retry), `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,` + base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64-decoded part of the secret after `whsec_`; two space-separated signatures for 24 h after a rotation).',
  'Verify with any Standard Webhooks library, e.g. `new Webhook(secret).verify(body, headers)` from the `standardwebhooks` npm package, or by hand: compute the signature over the raw body as received, compare it in constant time with each `v1,` entry of the header, and refuse a timestamp more than 5 minutes from your clock (replays).',
  'Retries: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (±10 %), honouring Retry-After on 429/502/504; any 2xx is success, redirects are failures; 410 disables the webhook. Delivery is at least once and not in order: deduplicate by webhook-id.',
].join('\n\n');

const id = z.coerce.number().int().min(1).max(MAX_SERIAL_ID).openapi({ param: { name: 'id', in: 'path' }, example: 7 });
const deliveryId = z
  .string()
  .regex(/^\d{1,19}$/, 'deliveryId must be a number')
  // Nineteen digits can still exceed a bigint, which the database would refuse with a 500.
  .refine((v) => !/^\d+$/.test(v) || BigInt(v) <= MAX_BIGINT_ID, 'deliveryId is out of range')
  .openapi({ param: { name: 'deliveryId', in: 'path' }, example: '1042' });

const patternsField = z.array(z.string().max(100)).min(1).max(MAX_PATTERNS).openapi({
  description: 'Event types to receive; a trailing * takes a family (vehicle.geofence.*), * alone takes every type except vehicle.position, which is sent (in batches) only to a webhook that names it',
  example: ['vehicle.geofence.*', 'vehicle.panic'],
});

const CreateBody = z
  .object({
    url: z.string().openapi({ example: 'https://example.com/hooks/fleet' }),
    events: patternsField,
    description: z.string().max(500).nullable().optional(),
  })
  .openapi('WebhookCreate');

const PatchBody = z
  .object({
    url: z.string().optional(),
    events: patternsField.optional(),
    description: z.string().max(500).nullable().optional(),
    enabled: z.boolean().optional().openapi({ description: 'true enables a disabled webhook again (its failure count starts over)' }),
  })
  .openapi('WebhookUpdate');

const listPage = <T extends z.ZodType>(item: T, name: string) =>
  z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() }).openapi(name);

const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });
const pageQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(50).openapi({ description: '1 to 100, default 50' }),
  cursor: z.string().optional().openapi({ description: 'next_cursor of the previous page' }),
};

const routes = {
  create: createRoute({
    method: 'post', path: '/webhooks', tags: ['Webhooks'], summary: 'Register a webhook', description: WEBHOOK_SIGNING,
    middleware: [requirePermission('webhooks:write')] as const,
    request: { body: { content: json(CreateBody), required: true } },
    responses: {
      201: { description: 'The webhook with its signing secret, shown only now', content: json(envelopeSchema(WebhookWithSecretSchema, 'WebhookCreated')) },
      ...errorResponses(
        [400, 'Invalid url (scheme, or an address webhooks may not reach), unknown event type, or malformed body'],
        [403, 'The key lacks webhooks:write, or events:read (a webhook delivers events: only a key that may read them subscribes one)'],
        [409, 'The key\'s user already has WEBHOOKS_PER_USER webhooks (20 by default) in this mode; delete one first'],
        [413, 'Body too large'], [415, 'Not JSON'],
      ),
    },
  }),
  list: createRoute({
    method: 'get', path: '/webhooks', tags: ['Webhooks'], summary: 'The webhooks of the key\'s user and mode, oldest first',
    description: 'A key sees the webhooks its own user registered in its mode (live or test), not those of other users of the account: a webhook receives what its owner can read.',
    middleware: [requirePermission('webhooks:read')] as const,
    request: { query: z.object(pageQuery) },
    responses: { 200: { description: 'A page of webhooks', content: json(listPage(WebhookSchema, 'WebhookPage')) }, ...errorResponses([400, 'Invalid limit or cursor']) },
  }),
  get: createRoute({
    method: 'get', path: '/webhooks/{id}', tags: ['Webhooks'], summary: 'One webhook (without its secret)',
    middleware: [requirePermission('webhooks:read')] as const,
    request: { params: z.object({ id }) },
    responses: { 200: { description: 'The webhook', content: json(envelopeSchema(WebhookSchema, 'WebhookResponse')) }, ...errorResponses([400, 'Invalid id'], [404, 'No such webhook']) },
  }),
  patch: createRoute({
    method: 'patch', path: '/webhooks/{id}', tags: ['Webhooks'], summary: 'Change a webhook\'s url, events, description, or enable/disable it',
    middleware: [requirePermission('webhooks:write')] as const,
    request: { params: z.object({ id }), body: { content: json(PatchBody), required: true } },
    responses: {
      200: { description: 'The webhook', content: json(envelopeSchema(WebhookSchema, 'WebhookUpdated')) },
      ...errorResponses(
        [400, 'Invalid field'],
        [403, 'The key lacks webhooks:write, or events:read to change events or url or to enable the webhook (what decides which events go where)'],
        [404, 'No such webhook'], [413, 'Body too large'], [415, 'Not JSON'],
      ),
    },
  }),
  remove: createRoute({
    method: 'delete', path: '/webhooks/{id}', tags: ['Webhooks'], summary: 'Delete a webhook and its delivery log',
    middleware: [requirePermission('webhooks:write')] as const,
    request: { params: z.object({ id }) },
    responses: {
      200: { description: 'Deleted', content: json(envelopeSchema(z.object({ id: z.number().int(), deleted: z.literal(true) }), 'WebhookDeleted')) },
      ...errorResponses([400, 'Invalid id'], [404, 'No such webhook']),
    },
  }),
  rotate: createRoute({
    method: 'post', path: '/webhooks/{id}/rotate-secret', tags: ['Webhooks'], summary: 'A new signing secret; the old one keeps signing for 24 h',
    middleware: [requirePermission('webhooks:write')] as const,
    request: { params: z.object({ id }) },
    responses: {
      200: { description: 'The webhook with its new secret, shown only now', content: json(envelopeSchema(WebhookWithSecretSchema, 'WebhookRotated')) },
      ...errorResponses([400, 'Invalid id'], [404, 'No such webhook']),
    },
  }),
  test: createRoute({
    method: 'post', path: '/webhooks/{id}/test', tags: ['Webhooks'], summary: 'Send a webhook.test event to this webhook',
    middleware: [requirePermission('webhooks:write')] as const,
    request: { params: z.object({ id }) },
    responses: {
      202: { description: 'The delivery, queued', content: json(envelopeSchema(DeliverySchema, 'WebhookTestQueued')) },
      ...errorResponses([400, 'Invalid id'], [404, 'No such webhook'], [409, 'The webhook is disabled']),
    },
  }),
  deliveries: createRoute({
    method: 'get', path: '/webhooks/{id}/deliveries', tags: ['Webhooks'], summary: 'The webhook\'s deliveries, newest first',
    middleware: [requirePermission('webhooks:read')] as const,
    request: { params: z.object({ id }), query: z.object({ ...pageQuery, status: z.enum(['pending', 'succeeded', 'failed']).optional() }) },
    responses: {
      200: { description: 'A page of deliveries', content: json(listPage(DeliverySchema, 'WebhookDeliveryPage')) },
      ...errorResponses([400, 'Invalid id, limit, status or cursor'], [404, 'No such webhook']),
    },
  }),
  delivery: createRoute({
    method: 'get', path: '/webhooks/{id}/deliveries/{deliveryId}', tags: ['Webhooks'], summary: 'One delivery with every attempt',
    middleware: [requirePermission('webhooks:read')] as const,
    request: { params: z.object({ id, deliveryId }) },
    responses: {
      200: { description: 'The delivery', content: json(envelopeSchema(DeliverySchema.extend({ attemptLog: z.array(AttemptSchema) }).openapi('WebhookDeliveryDetail'), 'WebhookDeliveryResponse')) },
      ...errorResponses([400, 'Invalid id'], [404, 'No such webhook or delivery']),
    },
  }),
  retry: createRoute({
    method: 'post', path: '/webhooks/{id}/deliveries/{deliveryId}/retry', tags: ['Webhooks'], summary: 'Attempt a failed or pending delivery again now',
    middleware: [requirePermission('webhooks:write')] as const,
    request: { params: z.object({ id, deliveryId }) },
    responses: {
      202: { description: 'The delivery, queued', content: json(envelopeSchema(DeliverySchema, 'WebhookRetryQueued')) },
      ...errorResponses([400, 'Invalid id'], [404, 'No such webhook or delivery'], [409, 'The delivery already succeeded, or the webhook is disabled']),
    },
  }),
};

/** The patterns as stored: trimmed, blanks and repeats dropped, each one known. */
function checkedPatterns(patterns: string[]): string[] {
  const names = [...new Set(patterns.map((p) => p.trim()).filter(Boolean))];
  // A blank name would be stored as a pattern that matches nothing: a webhook that never fires.
  if (names.length === 0) throw new ApiError(400, 'events must name at least one event type or family, e.g. "vehicle.geofence.*"');
  inField('events', () => parseEventTypePatterns(names));
  return names;
}

/**
 * A webhook delivers events: a key that may not read them may not decide which events go where
 * (subscribe, point a webhook elsewhere, or enable one), or webhooks:write alone would read the log.
 */
function requireEventsRead(permissions: readonly string[], what: string): void {
  if (!grants(permissions, 'events:read')) {
    throw new ApiError(403, `This API key lacks the events:read permission, which ${what} needs besides webhooks:write: a webhook delivers events, so only a key that may read them subscribes one`);
  }
}

export function webhookRoutes({ db, config, webhookDispatch }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();
  const perUser = config.webhooksPerUser ?? DEFAULT_WEBHOOKS_PER_USER;
  const checkedUrl = async (url: string) => {
    await checkWebhookUrl(url, { allowPrivate: config.webhookAllowPrivate ?? false });
    return url;
  };
  const owned = async (scope: Parameters<typeof findWebhook>[1], webhookId: number) => {
    const webhook = await findWebhook(db, scope, webhookId);
    if (!webhook) throw new ApiError(404, `Webhook not found: ${webhookId}`);
    return webhook;
  };

  app.openapi(routes.create, async (c) => {
    requireEventsRead(c.get('principal').permissions, 'registering a webhook');
    const body = c.req.valid('json');
    const events = checkedPatterns(body.events);
    const url = await checkedUrl(body.url);
    const secret = newWebhookSecret();
    const row = await inTransaction(db, async (trx) => {
      const created = await insertWebhook(trx, c.get('principal').scope, { url, events, description: body.description ?? null, secret }, perUser);
      if (!created) {
        throw new ApiError(409, `A user may have at most ${perUser} webhooks in each mode (WEBHOOKS_PER_USER), and this key's user has them all; delete one first (DELETE /webhooks/{id})`);
      }
      await recordAudit(trx, auditActor(c), { action: 'webhook.created', targetType: 'webhook', targetId: String(created.id), details: { url, events } });
      return created;
    });
    return c.json(envelope({ ...webhookView(row), secret }), 201);
  });

  app.openapi(routes.list, async (c) => {
    const { limit, cursor } = c.req.valid('query');
    const after = cursor === undefined ? 0 : Number(decodeIdCursor('webhooks', cursor, BigInt(MAX_SERIAL_ID)));
    const rows = await webhookPage(db, c.get('principal').scope, after, limit);
    return c.json(idPage('webhooks', rows, limit, webhookView), 200);
  });

  app.openapi(routes.get, async (c) => c.json(envelope(webhookView(await owned(c.get('principal').scope, c.req.valid('param').id))), 200));

  app.openapi(routes.patch, async (c) => {
    const { scope, permissions } = c.get('principal');
    const webhookId = c.req.valid('param').id;
    const body = c.req.valid('json');
    if (body.events !== undefined || body.url !== undefined || body.enabled === true) {
      requireEventsRead(permissions, 'changing a webhook\'s events or url, or enabling it,');
    }
    await owned(scope, webhookId);
    const changes = {
      url: body.url === undefined ? undefined : await checkedUrl(body.url),
      events: body.events === undefined ? undefined : checkedPatterns(body.events),
      description: body.description,
      enabled: body.enabled,
    };
    const row = await inTransaction(db, async (trx) => {
      const updated = await updateWebhook(trx, scope, webhookId, changes);
      if (updated) await recordAudit(trx, auditActor(c), { action: 'webhook.updated', targetType: 'webhook', targetId: String(webhookId), details: { changed: body } });
      return updated;
    });
    if (!row) throw new ApiError(404, `Webhook not found: ${webhookId}`);
    return c.json(envelope(webhookView(row)), 200);
  });

  app.openapi(routes.remove, async (c) => {
    const webhookId = c.req.valid('param').id;
    const deleted = await inTransaction(db, async (trx) => {
      const gone = await deleteWebhook(trx, c.get('principal').scope, webhookId);
      if (gone) await recordAudit(trx, auditActor(c), { action: 'webhook.deleted', targetType: 'webhook', targetId: String(webhookId) });
      return gone;
    });
    if (!deleted) throw new ApiError(404, `Webhook not found: ${webhookId}`);
    return c.json(envelope({ id: webhookId, deleted: true as const }), 200);
  });

  app.openapi(routes.rotate, async (c) => {
    const webhookId = c.req.valid('param').id;
    const secret = newWebhookSecret();
    const row = await inTransaction(db, async (trx) => {
      const rotated = await rotateWebhookSecret(trx, c.get('principal').scope, webhookId, secret, new Date(Date.now() + ROTATION_OVERLAP_MS));
      if (rotated) await recordAudit(trx, auditActor(c), { action: 'webhook.secret_rotated', targetType: 'webhook', targetId: String(webhookId) });
      return rotated;
    });
    if (!row) throw new ApiError(404, `Webhook not found: ${webhookId}`);
    return c.json(envelope({ ...webhookView(row), secret }), 200);
  });

  app.openapi(routes.test, async (c) => {
    const webhook = await owned(c.get('principal').scope, c.req.valid('param').id);
    if (!webhook.enabled) throw new ApiError(409, `Webhook ${webhook.id} is disabled; enable it first (PATCH {"enabled": true})`);
    const delivery = await insertTestDelivery(db, webhook.id, (id) => ({ ...webhookTestPayload(id, webhook.id, new Date()) }));
    await webhookDispatch?.deliverSoon([String(delivery.id)], c.get('requestId'));
    return c.json(envelope(deliveryView(delivery)), 202);
  });

  app.openapi(routes.deliveries, async (c) => {
    const webhook = await owned(c.get('principal').scope, c.req.valid('param').id);
    const { limit, cursor, status } = c.req.valid('query');
    const before = cursor === undefined ? undefined : decodeIdCursor('deliveries', cursor);
    const rows = await deliveryPage(db, webhook.id, { beforeId: before, status, limit });
    return c.json(idPage('deliveries', rows, limit, deliveryView), 200);
  });

  app.openapi(routes.delivery, async (c) => {
    const params = c.req.valid('param');
    const webhook = await owned(c.get('principal').scope, params.id);
    const delivery = await findDelivery(db, webhook.id, params.deliveryId);
    if (!delivery) throw new ApiError(404, `Delivery not found: ${params.deliveryId}`);
    return c.json(envelope({ ...deliveryView(delivery), attemptLog: (await deliveryAttempts(db, String(delivery.id))).map(attemptView) }), 200);
  });

  app.openapi(routes.retry, async (c) => {
    const params = c.req.valid('param');
    const webhook = await owned(c.get('principal').scope, params.id);
    const existing = await findDelivery(db, webhook.id, params.deliveryId);
    if (!existing) throw new ApiError(404, `Delivery not found: ${params.deliveryId}`);
    // The workers skip a disabled webhook's deliveries: a 202 would promise an attempt that does not come.
    if (!webhook.enabled) throw new ApiError(409, `Webhook ${webhook.id} is disabled; enable it first (PATCH {"enabled": true})`);
    const delivery = await retryDelivery(db, webhook.id, params.deliveryId);
    if (!delivery) throw new ApiError(409, `Delivery ${params.deliveryId} already succeeded`);
    await webhookDispatch?.deliverSoon([String(delivery.id)], c.get('requestId'));
    return c.json(envelope(deliveryView(delivery)), 202);
  });

  return app;
}
