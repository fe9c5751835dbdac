import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { Db } from '../../db/database.ts';
import { createFirstAccount } from '../../db/first-account.ts';
import { firstRunTokenStanding } from '../../db/first-run-tokens.ts';
import { passwordProblem, PASSWORD_MAX_LENGTH } from '../../domain/access/password-rule.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { envelope, envelopeSchema, ErrorEnvelope } from '../envelope.ts';
import type { FailedAuthenticationLimit } from '../auth/failed-authentication-limit.ts';
import { hashApiKey } from '../auth/api-key-token.ts';
import { hashPassword } from '../auth/password-hash.ts';
import { checkSameOrigin, type SessionSettings } from '../auth/session-cookie.ts';
import { isValidTimeZone } from '../../domain/time/zoned-time.ts';

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
    + '(`/console#setup=…`) whose token this takes, at any API process of the same database. It works once, for 24 hours, '
    + 'and not at all once an account exists. '
    + 'Then sign in with the email and password given.',
  security: [],
  request: { body: { content: json(SetupBody), required: true } },
  responses: {
    201: { description: 'The account and its owner', content: json(envelopeSchema(z.object({ accountId: z.number().int(), userId: z.number().int(), email: z.string() }), 'FirstRunCreated')) },
    400: { description: 'A field is missing or wrong; the password is too short or too long', content: errorContent },
    403: { description: 'The token is wrong, or the request came from another site', content: errorContent },
    404: { description: 'No setup is open (the link was used, or expired, or an account exists)', content: errorContent },
    409: { description: 'An account was created meanwhile', content: errorContent },
    429: { description: 'Too many wrong tokens from this address', content: errorContent },
  },
});

const NOT_OPEN = 'No setup is open: the link was used or has expired, or an account exists already (sign in). '
  + 'With no account yet, restart the server for a new link';

/** POST /auth/setup: public, before authentication; the token is its own credential. */
export function firstRunRoutes(db: Db, settings: SessionSettings, failures: FailedAuthenticationLimit) {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(setup, async (c) => {
    checkSameOrigin(c, settings.publicUrl);
    const body = c.req.valid('json');
    const tokenHash = hashApiKey(body.token);
    const standing = await firstRunTokenStanding(db, tokenHash);
    if (standing === 'closed') throw new ApiError(404, NOT_OPEN);
    if (standing === 'wrong') {
      const blocked = await failures.failed(c);
      if (blocked) return c.json({ success: false as const, data: null, error: blocked.message, timestamp: new Date().toISOString() }, 429, { 'Retry-After': String(blocked.retryAfterSeconds) }) as never;
      throw new ApiError(403, 'This setup link is not the one the server printed: copy it again from the server\'s output');
    }
    const problem = passwordProblem(body.password);
    if (problem) throw new ApiError(400, problem);
    const outcome = await createFirstAccount(db, tokenHash, {
      accountName: body.accountName, email: body.email, name: body.name ?? null, timezone: body.timezone, passwordHash: await hashPassword(body.password),
    });
    if (outcome.kind === 'account-exists') throw new ApiError(409, 'An account exists already: sign in, or ask its owner for an invitation');
    // Expired between the check and the transaction.
    if (outcome.kind === 'token-gone') throw new ApiError(404, NOT_OPEN);
    const created = { accountId: outcome.accountId, userId: outcome.userId };
    return c.json(envelope({ ...created, email: body.email.toLowerCase() }), 201) as never;
  });
  return app;
}
