import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { recordAudit } from '../../db/audit-log.ts';
import { revocationAudit } from '../../db/credential-audit.ts';
import { CREDENTIAL_KINDS, type CredentialKind } from '../../db/credential-kinds.ts';
import { credentialPage, revokeOwnCredential, type CredentialRecord } from '../../db/credentials.ts';
import { inTransaction } from '../../db/database.ts';
import type { DeviceMode } from '../../db/schema.ts';
import { DomainError } from '../../domain/domain-error.ts';
import type { AppEnv, Principal } from '../app-env.ts';
import { auditActor } from '../audit-actor.ts';
import { mintCredential } from '../auth/mint-credential.ts';
import { mintedExpiry, mintedPermissions, mintingCredential } from '../auth/minting.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import { decodeIdCursor, idPage } from '../pagination/id-cursor.ts';
import type { RouteDeps } from '../route-deps.ts';

/** What a create body may hold: a key's names `permissions` (and may name its mode), a client's `scopes`. */
export interface CredentialCreateBody {
  name?: string;
  mode?: DeviceMode;
  permissions?: string[];
  scopes?: string[];
  expiresAt?: string;
}

/** One kind's routes: its schemas, its view and the sentences of its documentation; the rest is shared. */
export interface CredentialRoutesSpec {
  kind: CredentialKind;
  /** The path under /api/v1, also the name its cursors carry. */
  resource: 'api-keys' | 'oauth-clients';
  /** The OpenAPI names' stem: `${stem}Page`, `${stem}CreatedResponse`, `${stem}Revoked`. */
  stem: string;
  schema: z.ZodType;
  /** The schema of one just made, with its secret. */
  createdSchema: z.ZodType;
  createBody: z.ZodType<CredentialCreateBody>;
  view: (record: CredentialRecord) => object;
  /** The created answer's field holding the secret. */
  secretField: string;
  idExample: number;
  docs: { create: string; createDescription: string; invalid: string; forbidden: string; revoke: string };
}

const MAX_SERIAL_ID = 2_147_483_647;

/**
 * The modes whose credentials a caller lists, mints and revokes: a key's or a token's own, as it
 * reaches only that mode's data; both for a signed-in session, which is the user at the keyboard (the
 * console makes and revokes the user's test keys too; what a test key reaches is test data alone).
 */
const managedModes = (principal: Principal): DeviceMode[] => (principal.credential.kind === 'session' ? ['live', 'test'] : [principal.scope.mode]);
const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

/**
 * The lifecycle every credential shares, as `GET /{resource}` (the user's, of the caller's mode, by
 * id pages), `POST /{resource}` (minted within the caller's permissions and life, its parent
 * recorded) and `DELETE /{resource}/{id}` (idempotent, taking what it minted along, audited).
 */
export function credentialRoutes({ db }: RouteDeps, spec: CredentialRoutesSpec) {
  const { kind, resource, stem, docs } = spec;
  const { noun, shortNoun, grantsName } = CREDENTIAL_KINDS[kind];
  const notFound = `${noun} not found`;
  const id = z.coerce.number().int().min(1).max(MAX_SERIAL_ID).openapi({ param: { name: 'id', in: 'path' }, example: spec.idExample });
  const Page = z.object({ data: z.array(spec.schema), has_more: z.boolean(), next_cursor: z.string().nullable() }).openapi(`${stem}Page`);

  const routes = {
    list: createRoute({
      method: 'get', path: `/${resource}`, tags: ['Access'], summary: `The user's ${noun}s of the caller's mode, oldest first (never their secrets)`,
      description: `A signed-in session (the console) lists the user's ${noun}s of both modes.`,
      middleware: [requirePermission('keys:read')] as const,
      request: {
        query: z.object({
          limit: z.coerce.number().int().min(1).max(100).default(50).openapi({ description: '1 to 100, default 50' }),
          cursor: z.string().optional().openapi({ description: 'next_cursor of the previous page' }),
        }),
      },
      responses: { 200: { description: `A page of ${shortNoun}s`, content: json(Page) }, ...errorResponses([400, 'Invalid limit or cursor']) },
    }),
    create: createRoute({
      method: 'post', path: `/${resource}`, tags: ['Access'], summary: docs.create, description: docs.createDescription,
      middleware: [requirePermission('keys:write')] as const,
      request: { body: { content: json(spec.createBody), required: true } },
      responses: {
        201: { description: `The ${shortNoun} with its secret, shown only now`, content: json(envelopeSchema(spec.createdSchema, `${stem}CreatedResponse`)) },
        ...errorResponses([400, docs.invalid], [403, docs.forbidden], [413, 'Body too large'], [415, 'Not JSON']),
      },
    }),
    revoke: createRoute({
      method: 'delete', path: `/${resource}/{id}`, tags: ['Access'], summary: docs.revoke,
      middleware: [requirePermission('keys:write')] as const,
      request: { params: z.object({ id }) },
      responses: {
        200: { description: `The revoked ${shortNoun} (a repeat answers the same)`, content: json(envelopeSchema(spec.schema, `${stem}Revoked`)) },
        ...errorResponses([400, 'Invalid id'], [404, notFound]),
      },
    }),
  };

  const app = new OpenAPIHono<AppEnv>();

  app.openapi(routes.list, async (c) => {
    const query = c.req.valid('query');
    const afterId = query.cursor === undefined ? undefined : Number(decodeIdCursor(resource, query.cursor, BigInt(MAX_SERIAL_ID)));
    const principal = c.get('principal');
    const rows = await credentialPage(db, kind, principal.scope, afterId, query.limit, managedModes(principal));
    return c.json(idPage(resource, rows, query.limit, spec.view), 200);
  });

  app.openapi(routes.create, async (c) => {
    const body = c.req.valid('json');
    const principal = c.get('principal');
    const { scope } = principal;
    // A key or token never mints one of the other mode; a session mints either.
    if (body.mode !== undefined && !managedModes(principal).includes(body.mode)) {
      throw new DomainError('invalid', `A ${scope.mode} credential can only create ${scope.mode} ${shortNoun}s`);
    }
    const grants = mintedPermissions(principal, body[grantsName], grantsName);
    const expiresAt = mintedExpiry(principal, body.expiresAt);
    const request = { userId: scope.userId, mode: body.mode ?? scope.mode, name: body.name ?? null, grants, expiresAt, parent: mintingCredential(principal) };
    const { record, secret } = await mintCredential(db, kind, request, auditActor(c));
    return c.json(envelope({ ...spec.view(record), [spec.secretField]: secret }), 201);
  });

  app.openapi(routes.revoke, async (c) => {
    const result = await inTransaction(db, async (trx) => {
      const principal = c.get('principal');
      const revoked = await revokeOwnCredential(trx, kind, principal.scope, c.req.valid('param').id, managedModes(principal));
      if (revoked?.revokedNow) for (const entry of revocationAudit(kind, revoked)) await recordAudit(trx, auditActor(c), entry);
      return revoked;
    });
    if (!result) throw new DomainError('not_found', notFound);
    return c.json(envelope(spec.view(result.record)), 200);
  });

  return app;
}
