import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { apiKeyPage, insertApiKey, revokeOwnApiKey } from '../../db/api-keys.ts';
import { recordAudit } from '../../db/audit-log.ts';
import { inTransaction } from '../../db/database.ts';
import { cascadeAuditEntries } from '../../db/minted-credentials.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { auditActor } from '../audit-actor.ts';
import { issueApiKey } from '../auth/api-key-token.ts';
import { mintedExpiry, mintedPermissions, mintingCredential } from '../auth/minting.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import { decodeIdCursor, idPage } from '../pagination/id-cursor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { ApiKeySchema, NewApiKeySchema, apiKeyView } from '../views/credential-view.ts';

const NOT_FOUND = 'API key not found';
const MAX_SERIAL_ID = 2_147_483_647;
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });
const id = z.coerce.number().int().min(1).max(MAX_SERIAL_ID).openapi({ param: { name: 'id', in: 'path' }, example: 7 });

const CreateBody = z
  .object({
    name: z.string().trim().min(1).max(100).optional().openapi({ example: 'TMS integration' }),
    mode: z.enum(['live', 'test']).optional().openapi({ description: 'The caller\'s own mode (the default); a key never mints one of the other mode' }),
    permissions: z.array(z.string().max(50)).min(1).max(50).optional().openapi({
      description: 'Permission names (or *), each held by the calling key; default: the caller\'s own', example: ['vehicles:read', 'events:read'],
    }),
    expiresAt: z.string().max(40).optional().openapi({ description: 'ISO 8601; at or before the calling key\'s own expiry (the default)', example: '2025-12-31T23:59:59Z' }),
  })
  .strict()
  .openapi('ApiKeyCreate');

const KeyPage = z.object({ data: z.array(ApiKeySchema), has_more: z.boolean(), next_cursor: z.string().nullable() }).openapi('ApiKeyPage');

const MINTING = 'A key (or an OAuth token) can mint a key only with permissions it holds itself and a life no longer than its own; commands:write and keys:write are passed on only when named.';

const routes = {
  list: createRoute({
    method: 'get', path: '/api-keys', tags: ['Access'], summary: 'The user\'s API keys of the caller\'s mode, oldest first (never their secrets)',
    middleware: [requirePermission('keys:read')] as const,
    request: {
      query: z.object({
        limit: z.coerce.number().int().min(1).max(100).default(50).openapi({ description: '1 to 100, default 50' }),
        cursor: z.string().optional().openapi({ description: 'next_cursor of the previous page' }),
      }),
    },
    responses: { 200: { description: 'A page of keys', content: json(KeyPage) }, ...errorResponses([400, 'Invalid limit or cursor']) },
  }),
  create: createRoute({
    method: 'post', path: '/api-keys', tags: ['Access'], summary: 'Create an API key; its secret is shown once', description: MINTING,
    middleware: [requirePermission('keys:write')] as const,
    request: { body: { content: json(CreateBody), required: true } },
    responses: {
      201: { description: 'The key with its secret, shown only now', content: json(envelopeSchema(NewApiKeySchema, 'ApiKeyCreatedResponse')) },
      ...errorResponses(
        [400, 'Unknown permission, another mode, an expiry that is not a future date-time'],
        [403, 'The calling credential lacks keys:write, or a permission it would grant, or would be outlived by the new key'],
        [413, 'Body too large'],
        [415, 'Not JSON'],
      ),
    },
  }),
  revoke: createRoute({
    method: 'delete', path: '/api-keys/{id}', tags: ['Access'], summary: 'Revoke an API key of the user; it fails from its next request, on every API process',
    middleware: [requirePermission('keys:write')] as const,
    request: { params: z.object({ id }) },
    responses: { 200: { description: 'The revoked key (a repeat answers the same)', content: json(envelopeSchema(ApiKeySchema, 'ApiKeyRevoked')) }, ...errorResponses([400, 'Invalid id'], [404, NOT_FOUND]) },
  }),
};

export function apiKeyRoutes({ db }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();

  app.openapi(routes.list, async (c) => {
    const query = c.req.valid('query');
    const afterId = query.cursor === undefined ? undefined : Number(decodeIdCursor('api-keys', query.cursor, BigInt(MAX_SERIAL_ID)));
    const rows = await apiKeyPage(db, c.get('principal').scope, afterId, query.limit);
    return c.json(idPage('api-keys', rows, query.limit, apiKeyView), 200);
  });

  app.openapi(routes.create, async (c) => {
    const body = c.req.valid('json');
    const principal = c.get('principal');
    const { scope } = principal;
    if (body.mode !== undefined && body.mode !== scope.mode) throw new ApiError(400, `A ${scope.mode} credential can only create ${scope.mode} keys`);
    const permissions = mintedPermissions(principal, body.permissions);
    const expiresAt = mintedExpiry(principal, body.expiresAt);
    const issued = issueApiKey(scope.mode);
    const row = await inTransaction(db, async (trx) => {
      const key = await insertApiKey(trx, {
        userId: scope.userId, name: body.name ?? null, prefix: issued.prefix, keyHash: issued.hash, mode: scope.mode, permissions, expiresAt,
        parent: mintingCredential(principal),
      });
      await recordAudit(trx, auditActor(c), {
        action: 'api_key.created', targetType: 'api_key', targetId: String(key.id),
        details: { prefix: key.prefix, name: key.name, permissions, expiresAt: expiresAt?.toISOString() ?? null },
      });
      return key;
    });
    return c.json(envelope({ ...apiKeyView(row), key: issued.key }), 201);
  });

  app.openapi(routes.revoke, async (c) => {
    const keyId = c.req.valid('param').id;
    const result = await inTransaction(db, async (trx) => {
      const revoked = await revokeOwnApiKey(trx, c.get('principal').scope, keyId);
      if (revoked?.revokedNow) {
        await recordAudit(trx, auditActor(c), { action: 'api_key.revoked', targetType: 'api_key', targetId: String(keyId), details: { prefix: revoked.key.prefix } });
        for (const entry of cascadeAuditEntries(revoked.minted)) await recordAudit(trx, auditActor(c), entry);
      }
      return revoked;
    });
    if (!result) throw new ApiError(404, NOT_FOUND);
    return c.json(envelope(apiKeyView(result.key)), 200);
  });

  return app;
}
