import { z } from '@hono/zod-openapi';
import type { RouteDeps } from '../route-deps.ts';
import { NewOauthClientSchema, OauthClientSchema, oauthClientView } from '../views/credential-view.ts';
import { credentialRoutes } from './credential-routes.ts';

const CreateBody = z
  .object({
    name: z.string().trim().min(1).max(100).optional().openapi({ example: 'Insurance telematics partner' }),
    mode: z.enum(['live', 'test']).optional().openapi({ description: 'The caller\'s own mode (the default); a key or token never registers a client of the other mode, a signed-in session registers either' }),
    scopes: z.array(z.string().max(50)).min(1).max(50).optional().openapi({
      description: 'Permission names (or *) its tokens may be given, each held by the caller; default: the caller\'s own', example: ['vehicles:read', 'reports:read'],
    }),
    expiresAt: z.string().max(40).optional().openapi({ description: 'ISO 8601; at or before the caller\'s own expiry (the default)' }),
  })
  .strict()
  .openapi('OauthClientCreate');

/** GET, POST /oauth-clients and DELETE /oauth-clients/{id}: clients of the client credentials grant. */
export function oauthClientRoutes(deps: RouteDeps) {
  return credentialRoutes(deps, {
    kind: 'oauth_client', resource: 'oauth-clients', stem: 'OauthClient', idExample: 3,
    schema: OauthClientSchema, createdSchema: NewOauthClientSchema, createBody: CreateBody, view: oauthClientView, secretField: 'clientSecret',
    docs: {
      create: 'Register an OAuth 2.0 client (client credentials grant); its secret is shown once',
      createDescription: 'The client acts as the caller\'s user, in the caller\'s mode, with at most the scopes given (each held by the caller) and no longer than the caller lives. It asks POST /oauth/token for access tokens.',
      invalid: 'Unknown scope or an expiry that is not a future date-time',
      forbidden: 'The calling credential lacks keys:write, or a scope it would grant, or would be outlived by the client',
      revoke: 'Revoke an OAuth client and every token it was issued',
    },
  });
}
