import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { findUser } from '../../db/users.ts';
import { consumeSignInToken, passwordHashOf, setPasswordHash, signInCandidate } from '../../db/user-passwords.ts';
import { insertSession, revokeSession, revokeSessionsOfUser, sessionsOfUser, type SessionRow } from '../../db/user-sessions.ts';
import type { Db } from '../../db/database.ts';
import { passwordProblem, PASSWORD_MAX_LENGTH } from '../../domain/access/password-rule.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { clientAddress } from '../client-address.ts';
import { envelope, envelopeSchema, errorEnvelope, errorResponses, ErrorEnvelope } from '../envelope.ts';
import { hashApiKey } from '../auth/api-key-token.ts';
import type { FailedAuthenticationLimit } from '../auth/failed-authentication-limit.ts';
import { hashPassword, passwordMatches } from '../auth/password-hash.ts';
import {
  checkSameOrigin, clearSessionCookie, sessionPrincipalOf, csrfTokenOf, CSRF_HEADER, issueSessionToken, SESSION_COOKIE, setSessionCookie, type SessionSettings,
} from '../auth/session-cookie.ts';

const json = <T extends z.ZodType>(schema: T) => ({ 'application/json': { schema } });
const errorContent = json(ErrorEnvelope);
const TAGS = ['Sessions'];
const SIGN_IN_FAILED = 'Email or password is wrong';
const cookieSecurity = [{ sessionCookie: [] }];
const NOT_A_SESSION = 'Not a session (an API key or token)';
/** A session's read: open to the session's own user, needing no permission, so never 403. */
function readResponses(...extra: Array<[number, string]>) {
  const responses = errorResponses(...extra);
  delete responses[403];
  return responses;
}
/** A session's write: refused (403) without the session's CSRF token or from another site. */
const writeResponses = (...extra: Array<[number, string]>) =>
  errorResponses([403, `The ${CSRF_HEADER} header missing or not this session's, or sent from another site`], ...extra);

const SignInBody = z.object({
  email: z.string().trim().min(1).max(320).openapi({ example: 'dispatcher@example.com' }),
  password: z.string().min(1).max(PASSWORD_MAX_LENGTH),
}).strict().openapi('SignIn');

const SessionSchema = z.object({
  id: z.string().openapi({ format: 'uuid' }),
  createdAt: z.string().openapi({ format: 'date-time' }),
  lastSeenAt: z.string().openapi({ format: 'date-time' }),
  expiresAt: z.string().openapi({ format: 'date-time', description: 'The session ends then at the latest' }),
  idleExpiresAt: z.string().openapi({ format: 'date-time', description: 'The session ends then unless used before (each use moves it on)' }),
  userAgent: z.string().nullable(),
  address: z.string().nullable(),
  current: z.boolean().openapi({ description: 'The session of this request' }),
}).openapi('Session');

const CurrentSchema = z.object({
  user: z.object({ id: z.number().int(), email: z.string(), name: z.string().nullable(), accountId: z.number().int(), timezone: z.string() }),
  role: z.string().openapi({ example: 'dispatcher' }),
  permissions: z.array(z.string()),
  csrfToken: z.string().openapi({ description: `Send it in ${CSRF_HEADER} with every POST, PUT, PATCH and DELETE of this session` }),
  session: SessionSchema,
}).openapi('CurrentSession');

const sessionView = (row: SessionRow, currentId: string | undefined) => ({
  id: row.id,
  createdAt: row.created_at.toISOString(),
  lastSeenAt: row.last_seen_at.toISOString(),
  expiresAt: row.expires_at.toISOString(),
  idleExpiresAt: row.idle_expires_at.toISOString(),
  userAgent: row.user_agent,
  address: row.address,
  current: row.id === currentId,
});

type SessionEnv = AppEnv & { Variables: { sessionToken: string } };

async function currentView(db: Db, c: Context<SessionEnv>, token: string, row: SessionRow) {
  const principal = c.get('principal');
  const user = await findUser(db, principal.scope.userId);
  if (!user) throw new ApiError(401, 'Session has ended: its user no longer exists');
  return {
    user: { id: user.id, email: user.email, name: user.name, accountId: user.account_id, timezone: user.timezone },
    role: principal.role,
    permissions: principal.permissions,
    csrfToken: csrfTokenOf(token),
    session: sessionView(row, row.id),
  };
}

const signIn = createRoute({
  method: 'post', path: '/auth/sign-in', tags: TAGS, summary: 'Sign in with an email and a password',
  description: `Answers the session (with its CSRF token) and sets the \`${SESSION_COOKIE}\` cookie (HttpOnly, SameSite=Lax, Path=/, Secure over HTTPS). The same answer for an unknown email and a wrong password. Failed sign-ins are slowed per email and per client address (429 with Retry-After). Refused from another site's page (Origin, Sec-Fetch-Site).`,
  security: [],
  request: { body: { content: json(SignInBody), required: true } },
  responses: {
    200: { description: 'Signed in; Set-Cookie carries the session', content: json(envelopeSchema(CurrentSchema, 'CurrentSessionEnvelope')) },
    400: { description: 'Malformed body', content: errorContent },
    401: { description: SIGN_IN_FAILED, content: errorContent },
    403: { description: 'Sent from another site', content: errorContent },
    429: { description: 'Too many failed sign-ins for this email or from this address; see Retry-After', content: errorContent },
  },
});

const SetPasswordBody = z.object({
  token: z.string().min(1).max(100).openapi({ description: 'The one-time token of the link `fleet user create` or `fleet user reset-password` printed' }),
  password: z.string().max(PASSWORD_MAX_LENGTH * 4).openapi({ description: 'At least 10 characters' }),
}).strict().openapi('SetPassword');

const setPassword = createRoute({
  method: 'post', path: '/auth/set-password', tags: TAGS, summary: 'Set a password with a one-time token',
  description: 'The token works once, before it expires. Every session of the user ends; sign in with the new password.',
  security: [],
  request: { body: { content: json(SetPasswordBody), required: true } },
  responses: {
    200: { description: 'Password set', content: json(envelopeSchema(z.object({ email: z.string() }), 'PasswordSet')) },
    400: { description: 'Token unknown, used or expired; password too short or too long', content: errorContent },
    403: { description: 'Sent from another site', content: errorContent },
  },
});

/** POST /auth/sign-in and POST /auth/set-password: public, before authentication. */
export function signInRoutes(db: Db, settings: SessionSettings, failures: FailedAuthenticationLimit) {
  const app = new OpenAPIHono<AppEnv>();
  app.openapi(signIn, async (c) => {
    checkSameOrigin(c, settings.publicUrl);
    const body = c.req.valid('json');
    const email = body.email.toLowerCase();
    const blocked = await failures.signInBlocked(c, email);
    if (blocked) return c.json(errorEnvelope(blocked.message), 429, { 'Retry-After': String(blocked.retryAfterSeconds) }) as never;
    const user = await signInCandidate(db, email);
    // An unknown email is checked against a dummy hash: it takes as long as a wrong password.
    const ok = await passwordMatches(user?.password_hash, body.password);
    if (!user || !ok) {
      await failures.signInFailed(c, email);
      return c.json(errorEnvelope(SIGN_IN_FAILED), 401) as never;
    }
    const { token, hash } = issueSessionToken();
    const row = await insertSession(db, { tokenHash: hash, userId: user.id, userAgent: c.req.header('User-Agent') ?? null, address: clientAddress(c) }, settings);
    setSessionCookie(c, token, row.expires_at, settings);
    const found = await findUser(db, user.id);
    c.set('principal', sessionPrincipalOf({ ...row, account_id: found!.account_id, email: found!.email, name: found!.name, timezone: found!.timezone, role: found!.role }));
    return c.json(envelope(await currentView(db, c as never, token, row)), 200) as never;
  });
  app.openapi(setPassword, async (c) => {
    checkSameOrigin(c, settings.publicUrl);
    const body = c.req.valid('json');
    const problem = passwordProblem(body.password);
    if (problem) throw new ApiError(400, problem);
    const userId = await consumeSignInToken(db, hashApiKey(body.token));
    if (userId === undefined) throw new ApiError(400, 'This link is unknown, already used or expired: ask an owner or admin of your account for a new one (the console\'s Users page), or an operator (fleet user reset-password)');
    await setPasswordHash(db, userId, await hashPassword(body.password));
    await revokeSessionsOfUser(db, userId);
    const user = await findUser(db, userId);
    return c.json(envelope({ email: user?.email ?? '' }), 200) as never;
  });
  return app;
}

const requireSession = (c: Context<SessionEnv>): { id: string; token: string } => {
  const { credential } = c.get('principal');
  if (credential.kind !== 'session') throw new ApiError(400, 'This endpoint is for a signed-in session (cookie); this request was authenticated by an API key or access token');
  return { id: credential.id, token: c.get('sessionToken') };
};

const current = createRoute({
  method: 'get', path: '/auth/session', tags: TAGS, summary: 'The current session: user, role, permissions and CSRF token',
  security: cookieSecurity,
  responses: { 200: { description: 'The session', content: json(envelopeSchema(CurrentSchema, 'CurrentSessionEnvelope')) }, ...readResponses([400, NOT_A_SESSION]) },
});
const signOut = createRoute({
  method: 'post', path: '/auth/sign-out', tags: TAGS, summary: 'Sign out: end this session', security: cookieSecurity,
  responses: { 204: { description: 'Signed out; the cookie is cleared' }, ...writeResponses([400, NOT_A_SESSION]) },
});
const signOutEverywhere = createRoute({
  method: 'post', path: '/auth/sign-out-everywhere', tags: TAGS, summary: 'End every session of the user, this one included', security: cookieSecurity,
  responses: { 200: { description: 'How many sessions ended', content: json(envelopeSchema(z.object({ ended: z.number().int() }), 'SessionsEnded')) }, ...writeResponses([400, NOT_A_SESSION]) },
});
const listSessions = createRoute({
  method: 'get', path: '/auth/sessions', tags: TAGS, summary: 'The user\'s sessions in force, newest first', security: cookieSecurity,
  responses: { 200: { description: 'Sessions', content: json(envelopeSchema(z.array(SessionSchema), 'SessionList')) }, ...readResponses([400, NOT_A_SESSION]) },
});
const revokeOne = createRoute({
  method: 'delete', path: '/auth/sessions/{id}', tags: TAGS, summary: 'End one of the user\'s sessions', security: cookieSecurity,
  request: { params: z.object({ id: z.string().uuid() }) },
  responses: { 204: { description: 'Ended' }, ...writeResponses([400, 'Not a session; id not a UUID'], [404, 'No such session of the user in force']) },
});
const ChangePasswordBody = z.object({
  currentPassword: z.string().min(1).max(PASSWORD_MAX_LENGTH),
  newPassword: z.string().max(PASSWORD_MAX_LENGTH * 4).openapi({ description: 'At least 10 characters' }),
}).strict().openapi('ChangePassword');
const changePassword = createRoute({
  method: 'post', path: '/auth/password', tags: TAGS, summary: 'Change my password; every other session of mine ends', security: cookieSecurity,
  request: { body: { content: json(ChangePasswordBody), required: true } },
  responses: {
    200: { description: 'Changed; how many other sessions ended', content: json(envelopeSchema(z.object({ ended: z.number().int() }), 'PasswordChanged')) },
    ...writeResponses([400, 'Not a session; current password wrong; new password too short or too long']),
  },
});

/** The signed-in session's own endpoints, behind authentication (cookie writes carry the CSRF token). */
export function sessionRoutes(db: Db, settings: SessionSettings, failures: FailedAuthenticationLimit) {
  const app = new OpenAPIHono<SessionEnv>();
  app.openapi(current, async (c) => {
    const { id, token } = requireSession(c);
    const row = (await sessionsOfUser(db, c.get('principal').scope.userId)).find((s) => s.id === id);
    if (!row) throw new ApiError(401, 'Session has ended');
    return c.json(envelope(await currentView(db, c, token, row)), 200);
  });
  app.openapi(signOut, async (c) => {
    const { id } = requireSession(c);
    await revokeSession(db, c.get('principal').scope.userId, id);
    clearSessionCookie(c, settings);
    return c.body(null, 204);
  });
  app.openapi(signOutEverywhere, async (c) => {
    requireSession(c);
    const ended = await revokeSessionsOfUser(db, c.get('principal').scope.userId);
    clearSessionCookie(c, settings);
    return c.json(envelope({ ended }), 200);
  });
  app.openapi(listSessions, async (c) => {
    const { id } = requireSession(c);
    const rows = await sessionsOfUser(db, c.get('principal').scope.userId);
    return c.json(envelope(rows.map((row) => sessionView(row, id))), 200);
  });
  app.openapi(revokeOne, async (c) => {
    const { id } = requireSession(c);
    const target = c.req.valid('param').id;
    if (!(await revokeSession(db, c.get('principal').scope.userId, target))) throw new ApiError(404, 'No such session of yours in force');
    if (target === id) clearSessionCookie(c, settings);
    return c.body(null, 204);
  });
  app.openapi(changePassword, async (c) => {
    const { id } = requireSession(c);
    const body = c.req.valid('json');
    const userId = c.get('principal').scope.userId;
    const email = (await findUser(db, userId))?.email ?? String(userId);
    const blocked = await failures.signInBlocked(c, email);
    if (blocked) return c.json(errorEnvelope(blocked.message), 429, { 'Retry-After': String(blocked.retryAfterSeconds) }) as never;
    if (!(await passwordMatches(await passwordHashOf(db, userId), body.currentPassword))) {
      await failures.signInFailed(c, email);
      throw new ApiError(400, 'The current password is wrong');
    }
    const problem = passwordProblem(body.newPassword);
    if (problem) throw new ApiError(400, problem);
    await setPasswordHash(db, userId, await hashPassword(body.newPassword));
    const ended = await revokeSessionsOfUser(db, userId, id);
    return c.json(envelope({ ended }), 200);
  });
  return app;
}
