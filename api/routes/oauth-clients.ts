import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { recordAudit } from '../../db/audit-log.ts';
import { inTransaction } from '../../db/database.ts';
import { cascadeAuditEntries } from '../../db/minted-credentials.ts';
import { insertOauthClient, oauthClientPage, revokeOauthClient } from '../../db/oauth-clients.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { auditActor } from '../audit-actor.ts';
import { mintedExpiry, mintedPermissions, mintingCredential } from '../auth/minting.ts';
import { issueClientCredentials } from '../auth/oauth-credentials.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import { decodeIdCursor, idPage } from '../pagination/id-cursor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { NewOauthClientSchema, OauthClientSchema, oauthClientView } from '../views/credential-view.ts';

const NOT_FOUND = 'OAuth client not found';
const MAX_SERIAL_ID = 2_147_483_647;
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });
const id = z.coerce.number().int().min(1).max(MAX_SERIAL_ID).openapi({ param: { name: 'id', in: 'path' }, example: 3 });

const CreateBody = z
  .object({
    name: z.string().trim().min(1).max(100).optional().openapi({ example: 'Insurance telematics partner' }),
    scopes: z.array(z.string().max(50)).min(1).max(50).optional().openapi({
      description: 'Permission names (or *) its tokens may be given, each held by the caller; default: the caller\'s own', example: ['vehicles:read', 'reports:read'],
    }),
    expiresAt: z.string().max(40).optional().openapi({ description: 'ISO 8601; at or before the caller\'s own expiry (the default)' }),
  })
  .strict()
  .openapi('OauthClientCreate');

const ClientPage = z.object({ data: z.array(OauthClientSchema), has_more: z.boolean(), next_cursor: z.string().nullable() }).openapi('OauthClientPage');

const routes = {
  list: createRoute({
    method: 'get', path: '/oauth-clients', tags: ['Access'], summary: 'The user\'s OAuth clients of the caller\'s mode, oldest first (never their secrets)',
    middleware: [requirePermission('keys:read')] as const,
    request: {
      query: z.object({
        limit: z.coerce.number().int().min(1).max(100).default(50).openapi({ description: '1 to 100, default 50' }),
        cursor: z.string().optional().openapi({ description: 'next_cursor of the previous page' }),
      }),
    },
    responses: { 200: { description: 'A page of clients', content: json(ClientPage) }, ...errorResponses([400, 'Invalid limit or cursor']) },
  }),
  create: createRoute({
    method: 'post', path: '/oauth-clients', tags: ['Access'], summary: 'Register an OAuth 2.0 client (client credentials grant); its secret is shown once',
    description: 'The client acts as the caller\'s user, in the caller\'s mode, with at most the scopes given (each held by the caller) and no longer than the caller lives. It asks POST /oauth/token for access tokens.',
    middleware: [requirePermission('keys:write')] as const,
    request: { body: { content: json(CreateBody), required: true } },
    responses: {
      201: { description: 'The client with its secret, shown only now', content: json(envelopeSchema(NewOauthClientSchema, 'OauthClientCreatedResponse')) },
      ...errorResponses(
        [400, 'Unknown scope or an expiry that is not a future date-time'],
        [403, 'The calling credential lacks keys:write, or a scope it would grant, or would be outlived by the client'],
        [413, 'Body too large'],
        [415, 'Not JSON'],
      ),
    },
  }),
  revoke: createRoute({
    method: 'delete', path: '/oauth-clients/{id}', tags: ['Access'], summary: 'Revoke an OAuth client and every token it was issued',
    middleware: [requirePermission('keys:write')] as const,
    request: { params: z.object({ id }) },
    responses: { 200: { description: 'The revoked client (a repeat answers the same)', content: json(envelopeSchema(OauthClientSchema, 'OauthClientRevoked')) }, ...errorResponses([400, 'Invalid id'], [404, NOT_FOUND]) },
  }),
};

export function oauthClientRoutes({ db }: RouteDeps) {
  const app = new OpenAPIHono<AppEnv>();

  app.openapi(routes.list, async (c) => {
    const query = c.req.valid('query');
    const afterId = query.cursor === undefined ? undefined : Number(decodeIdCursor('oauth-clients', query.cursor, BigInt(MAX_SERIAL_ID)));
    const rows = await oauthClientPage(db, c.get('principal').scope, afterId, query.limit);
    return c.json(idPage('oauth-clients', rows, query.limit, oauthClientView), 200);
  });

  app.openapi(routes.create, async (c) => {
    const body = c.req.valid('json');
    const principal = c.get('principal');
    const scopes = mintedPermissions(principal, body.scopes, 'scopes');
    const expiresAt = mintedExpiry(principal, body.expiresAt);
    const issued = issueClientCredentials();
    const client = await inTransaction(db, async (trx) => {
      const row = await insertOauthClient(trx, {
        clientId: issued.clientId, secretHash: issued.secretHash, userId: principal.scope.userId, mode: principal.scope.mode, name: body.name ?? null, scopes, expiresAt,
        parent: mintingCredential(principal),
      });
      await recordAudit(trx, auditActor(c), {
        action: 'oauth_client.created', targetType: 'oauth_client', targetId: String(row.id),
        details: { clientId: row.client_id, name: row.name, scopes, expiresAt: expiresAt?.toISOString() ?? null },
      });
      return row;
    });
    return c.json(envelope({ ...oauthClientView(client), clientSecret: issued.secret }), 201);
  });

  app.openapi(routes.revoke, async (c) => {
    const clientId = c.req.valid('param').id;
    const result = await inTransaction(db, async (trx) => {
      const revoked = await revokeOauthClient(trx, c.get('principal').scope, clientId);
      if (revoked?.revokedNow) {
        await recordAudit(trx, auditActor(c), { action: 'oauth_client.revoked', targetType: 'oauth_client', targetId: String(clientId), details: { clientId: revoked.client.client_id } });
        for (const entry of cascadeAuditEntries(revoked.minted)) await recordAudit(trx, auditActor(c), entry);
      }
      return revoked;
    });
    if (!result) throw new ApiError(404, NOT_FOUND);
    return c.json(envelope(oauthClientView(result.client)), 200);
  });

  return app;
}
