import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { Db } from '../../db/database.ts';
import { createFirstAccount } from '../../db/first-account.ts';
import { passwordProblem, PASSWORD_MAX_LENGTH } from '../../domain/access/password-rule.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { envelope, envelopeSchema, ErrorEnvelope } from '../envelope.ts';
import type { FailedAuthenticationLimit } from '../auth/failed-authentication-limit.ts';
import type { FirstRunSetup } from '../auth/first-run-setup.ts';
import { hashPassword } from '../auth/password-hash.ts';
import { checkSameOrigin, type SessionSettings } from '../auth/session-cookie.ts';
import { isValidTimeZone } from '../time/zoned-time.ts';

const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });
const errorContent = json(ErrorEnvelope);

const SetupBody = z.object({
  token: z.string().min(1).max(100).openapi({ description: 'The token of the link `fleet serve` printed at start (after `#setup=`)' }),
  accountName: z.string().trim().min(1).max(200).openapi({ example: 'Acme Logistics' }),
  email: z.string().trim().email().max(320).openapi({ example: 'owner@example.com' }),
  name: z.string().trim().min(1).max(200).optional(),
  timezone: z.string().max(100).refine(isValidTimeZone, 'timezone must be an IANA time zone such as America/Mexico_City').openapi({ example: 'America/Mexico_City' }),
  password: z.string().max(PASSWORD_MAX_LENGTH * 4).openapi({ description: 'At least 10 characters' }),
}).strict().openapi('FirstRunSetup');

const setup = createRoute({
  method: 'post', path: '/auth/setup', tags: ['Sessions'], summary: 'Create the first account and its owner',
  description: 'Only on a server that started with no account: `fleet serve` then prints a one-time link '
    + '(`/console#setup=…`) whose token this takes, at that process. It works once, and not at all once an account exists. '
    + 'Then sign in with the email and password given.',
  security: [],
  request: { body: { content: json(SetupBody), required: true } },
  responses: {
    201: { description: 'The account and its owner', content: json(envelopeSchema(z.object({ accountId: z.number().int(), userId: z.number().int(), email: z.string() }), 'FirstRunCreated')) },
    400: { description: 'A field is missing or wrong; the password is too short or too long', content: errorContent },
    403: { description: 'The token is wrong, or the request came from another site', content: errorContent },
    404: { description: 'No setup is open at this process (an account exists, or the link is another process\'s)', content: errorContent },
    409: { description: 'An account was created meanwhile', content: errorContent },
    429: { description: 'Too many wrong tokens from this address', content: errorContent },
  },
});

/** POST /auth/setup: public, before authentication; the token is its own credential. */
export function firstRunRoutes(db: Db, firstRun: FirstRunSetup, settings: SessionSettings, failures: FailedAuthenticationLimit) {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(setup, async (c) => {
    checkSameOrigin(c, settings.publicUrl);
    if (!firstRun.open) throw new ApiError(404, 'No setup is open here: an account exists already (sign in), or the link was printed by another server process');
    const body = c.req.valid('json');
    if (!firstRun.matches(body.token)) {
      const blocked = await failures.failed(c);
      if (blocked) return c.json({ success: false as const, data: null, error: blocked.message, timestamp: new Date().toISOString() }, 429, { 'Retry-After': String(blocked.retryAfterSeconds) }) as never;
      throw new ApiError(403, 'This setup link is not the one the server printed: copy it again from the server\'s output');
    }
    const problem = passwordProblem(body.password);
    if (problem) throw new ApiError(400, problem);
    const created = await createFirstAccount(db, {
      accountName: body.accountName, email: body.email, name: body.name ?? null, timezone: body.timezone, passwordHash: await hashPassword(body.password),
    });
    firstRun.close();
    if (!created) throw new ApiError(409, 'An account exists already: sign in, or ask its owner for an invitation');
    return c.json(envelope({ ...created, email: body.email.toLowerCase() }), 201) as never;
  });
  return app;
}
