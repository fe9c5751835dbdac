import { z } from '@hono/zod-openapi';
import type { RouteDeps } from '../route-deps.ts';
import { ApiKeySchema, NewApiKeySchema, apiKeyView } from '../views/credential-view.ts';
import { credentialRoutes } from './credential-routes.ts';

const CreateBody = z
  .object({
    name: z.string().trim().min(1).max(100).optional().openapi({ example: 'TMS integration' }),
    mode: z.enum(['live', 'test']).optional().openapi({ description: 'The caller\'s own mode (the default); a key never mints one of the other mode, a signed-in session mints either' }),
    permissions: z.array(z.string().max(50)).min(1).max(50).optional().openapi({
      description: 'Permission names (or *), each held by the calling key; default: the caller\'s own', example: ['vehicles:read', 'events:read'],
    }),
    expiresAt: z.string().max(40).optional().openapi({ description: 'ISO 8601; at or before the calling key\'s own expiry (the default)', example: '2025-12-31T23:59:59Z' }),
  })
  .strict()
  .openapi('ApiKeyCreate');

/** GET, POST /api-keys and DELETE /api-keys/{id}. */
export function apiKeyRoutes(deps: RouteDeps) {
  return credentialRoutes(deps, {
    kind: 'api_key', resource: 'api-keys', stem: 'ApiKey', idExample: 7,
    schema: ApiKeySchema, createdSchema: NewApiKeySchema, createBody: CreateBody, view: apiKeyView, secretField: 'key',
    docs: {
      create: 'Create an API key; its secret is shown once',
      createDescription: 'A key (or an OAuth token) can mint a key only with permissions it holds itself and a life no longer than its own; commands:write and keys:write are passed on only when named.',
      invalid: 'Unknown permission, another mode, an expiry that is not a future date-time',
      forbidden: 'The calling credential lacks keys:write, or a permission it would grant, or would be outlived by the new key',
      revoke: 'Revoke an API key of the user; it fails from its next request, on every API process',
    },
  });
}
