import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { auditPage, type AuditRow } from '../../db/audit-log.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { errorResponses } from '../envelope.ts';
import { decodeIdCursor, idPage } from '../pagination/id-cursor.ts';
import { commaList } from '../query/comma-list.ts';
import type { RouteDeps } from '../route-deps.ts';

const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

export const AUDIT_ACTIONS = [
  'api_key.created', 'api_key.revoked', 'oauth_client.created', 'oauth_client.revoked',
  'webhook.created', 'webhook.updated', 'webhook.deleted', 'webhook.secret_rotated',
  'command.created', 'command.cancelled', 'vehicle.accumulators_set',
  'maintenance.created', 'maintenance.updated', 'maintenance.deleted', 'maintenance.serviced',
  'vehicle_group.created', 'vehicle_group.updated', 'vehicle_group.deleted',
  'notification_rule.created', 'notification_rule.updated', 'notification_rule.deleted',
  'user.created', 'user.updated', 'user.removed', 'user.sign_in_link_issued',
] as const;

const AuditEntrySchema = z
  .object({
    id: z.string(),
    action: z.enum(AUDIT_ACTIONS),
    target: z.object({ type: z.string().openapi({ example: 'api_key' }), id: z.string().openapi({ example: '12' }) }),
    actor: z
      .object({
        kind: z.enum(['api_key', 'oauth_client', 'cli', 'session']).openapi({ description: 'cli: an operator on the server with `fleet`; session: a signed-in user (cookie)' }),
        keyId: z.number().int().nullable(),
        keyPrefix: z.string().nullable(),
        clientId: z.string().nullable().openapi({ description: 'The OAuth client\'s public id' }),
        userId: z.number().int().nullable(),
      }),
    address: z.string().nullable().openapi({ description: 'The client address; null from the CLI', example: '203.0.113.9' }),
    details: z.record(z.string(), z.unknown()).openapi({ example: { prefix: 'fc_live_AbC123', permissions: ['vehicles:read'] } }),
    occurredAt: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('AuditEntry');

const AuditPage = z.object({ data: z.array(AuditEntrySchema), has_more: z.boolean(), next_cursor: z.string().nullable() }).openapi('AuditPage');

const route = createRoute({
  method: 'get', path: '/audit', tags: ['Access'], summary: 'The account\'s audit log of the caller\'s mode, newest first',
  description: `Who created or revoked API keys and OAuth clients, changed webhooks or vehicle groups, sent or cancelled commands, and set vehicles' odometer and engine hours: the key or client, the user, the address, when. Actions: ${AUDIT_ACTIONS.join(', ')}.`,
  middleware: [requirePermission('audit:read')] as const,
  request: {
    query: z.object({
      action: z.string().max(500).optional().openapi({ description: 'Comma-separated actions; `api_key.*` takes a family', example: 'api_key.*,command.created' }),
      from: z.string().max(40).optional().openapi({ description: 'ISO 8601: entries at or after it' }),
      to: z.string().max(40).optional().openapi({ description: 'ISO 8601: entries at or before it' }),
      limit: z.coerce.number().int().min(1).max(500).default(50).openapi({ description: '1 to 500, default 50' }),
      cursor: z.string().optional().openapi({ description: 'next_cursor of the previous page' }),
    }),
  },
  responses: { 200: { description: 'A page of entries', content: json(AuditPage) }, ...errorResponses([400, 'Unknown action, invalid time, limit or cursor']) },
});

function actionFilter(raw: string | undefined): string[] | undefined {
  const names = commaList(raw, 'action');
  if (!names) return undefined;
  for (const name of names) {
    const known = name.endsWith('.*') ? AUDIT_ACTIONS.some((a) => a.startsWith(name.slice(0, -1))) : (AUDIT_ACTIONS as readonly string[]).includes(name);
    if (!known) throw new ApiError(400, `action: unknown "${name}"; known: ${AUDIT_ACTIONS.join(', ')} (a trailing .* takes a family)`);
  }
  return names;
}

function instant(raw: string | undefined, name: string): Date | undefined {
  if (raw === undefined) return undefined;
  const at = new Date(raw);
  if (!/^\d{4}-\d\d-\d\d/.test(raw) || Number.isNaN(at.getTime())) throw new ApiError(400, `${name} must be an ISO 8601 date or date-time`);
  return at;
}

function entryView(row: AuditRow): z.infer<typeof AuditEntrySchema> {
  return {
    id: row.id,
    action: row.action as (typeof AUDIT_ACTIONS)[number],
    target: { type: row.target_type, id: row.target_id },
    actor: { kind: row.actor_kind, keyId: row.api_key_id, keyPrefix: row.key_prefix, clientId: row.public_client_id, userId: row.user_id },
    address: row.remote_address,
    details: row.details,
    occurredAt: row.occurred_at.toISOString(),
  };
}

export function auditRoutes({ db }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(route, async (c) => {
    const query = c.req.valid('query');
    const beforeId = query.cursor === undefined ? undefined : decodeIdCursor('audit', query.cursor);
    const rows = await auditPage(db, c.get('principal').scope, {
      actions: actionFilter(query.action), from: instant(query.from, 'from'), to: instant(query.to, 'to'), beforeId, limit: query.limit,
    });
    return c.json(idPage('audit', rows, query.limit, entryView), 200);
  });
  return app;
}
