import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import { issueForAccountUser } from '../../db/account-users.ts';
import type { AppEnv } from '../app-env.ts';
import { auditActor } from '../audit-actor.ts';
import { requireLiveMode } from '../auth/require-live-mode.ts';
import { requirePermission } from '../auth/require-permission.ts';
import { issueSignInLink } from '../auth/sign-in-link.ts';
import { envelope, envelopeSchema, errorResponses } from '../envelope.ts';
import type { RouteDeps } from '../route-deps.ts';

const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });

const id = z.coerce.number().int().min(1).max(2_147_483_647).openapi({ param: { name: 'id', in: 'path' }, example: 12 });

const SignInLinkSchema = z.object({
  url: z.string().openapi({
    description: 'The page /map/set-password with the one-time token in its fragment: shown only now',
    example: 'https://fleet.example.com/map/set-password#token=fsi_…',
  }),
  expiresAt: z.string().openapi({ format: 'date-time', description: '24 hours from now; the link works once, before then' }),
}).openapi('UserSignInLink');

const route = createRoute({
  method: 'post', path: '/users/{id}/sign-in-link', tags: ['Users'], summary: 'A one-time link for a user to set their password',
  description: 'The link (valid 24 hours, once) opens a page where the user sets a new password; using it ends every session of the user. '
    + 'Hand it to the user yourself: it is shown only in this answer. Only an owner issues one for an owner. A test-mode credential is refused (403): users are the account\'s, in both modes.',
  middleware: [requirePermission('users:write'), requireLiveMode('Users are the account\'s, in both modes: a test-mode key or token cannot issue their sign-in links; use a live key')] as const,
  request: { params: z.object({ id }) },
  responses: {
    201: { description: 'The link, shown only now', content: json(envelopeSchema(SignInLinkSchema, 'UserSignInLinkCreated')) },
    ...errorResponses([400, 'Invalid id'], [403, 'The caller lacks users:write, is of test mode, or only an owner issues a link for an owner'], [404, 'No such user in the account']),
  },
});

/**
 * POST /users/{id}/sign-in-link: what `fleet user reset-password` prints, for the account's owners and
 * admins. The link starts with PUBLIC_URL when it is set, else with the origin the request came to.
 */
export function userSignInLinkRoutes({ db }: RouteDeps, publicUrl: string | undefined) {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(route, async (c) => {
    const actor = { ...auditActor(c), userId: c.get('principal').scope.userId };
    const base = publicUrl ?? new URL(c.req.url).origin;
    const link = await issueForAccountUser(db, actor, c.req.valid('param').id, (trx, user) => issueSignInLink(trx, user.id, base));
    return c.json(envelope({ url: link.url, expiresAt: link.expiresAt.toISOString() }), 201);
  });
  return app;
}
