import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { findActiveSession, touchSession, type SessionLifetimes } from '../../db/user-sessions.ts';
import type { Db } from '../../db/database.ts';
import { isRole, rolePermissions, type Role } from '../../domain/access/roles.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv, Principal } from '../app-env.ts';
import { plainAddress, type TrustedProxies } from '../trusted-proxies.ts';
import { hashApiKey } from './api-key-token.ts';

export const SESSION_COOKIE = 'fleet_session';
export const SESSION_TOKEN_PREFIX = 'fss_';
export const CSRF_HEADER = 'X-CSRF-Token';
const TOUCH_INTERVAL_MS = 60_000;
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A role the code does not know (a newer release's) is taken as the least of them. */
const DEFAULT_SESSION_ROLE: Role = 'viewer';

export interface SessionSettings extends SessionLifetimes {
  /** PUBLIC_URL: its origin is accepted as the request's own besides the Host header's. */
  publicUrl?: string;
  trustedProxies?: TrustedProxies;
}

/** A random session token for the cookie, and the hash stored for it. */
export function issueSessionToken(): { token: string; hash: string } {
  const token = SESSION_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { token, hash: hashApiKey(token) };
}

/** The session's CSRF token: derived from its secret token, so it is bound to the session and never stored. */
export function csrfTokenOf(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('fleetcore csrf').digest('base64url');
}

/** Whether the request reached the server over HTTPS: its own socket, or a trusted proxy's X-Forwarded-Proto. */
export function overHttps(c: Context, trusted?: TrustedProxies): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  const socket = (c.env as { incoming?: { socket?: { remoteAddress?: string; encrypted?: boolean } } } | undefined)?.incoming?.socket;
  if (socket?.encrypted) return true;
  const peer = socket?.remoteAddress ? plainAddress(socket.remoteAddress) : null;
  const proto = c.req.header('X-Forwarded-Proto')?.split(',')[0]?.trim().toLowerCase();
  return proto === 'https' && peer !== null && trusted !== undefined && trusted.trusts(peer);
}

export function setSessionCookie(c: Context, token: string, expiresAt: Date, settings: SessionSettings): void {
  setCookie(c, SESSION_COOKIE, token, {
    httpOnly: true, sameSite: 'Lax', path: '/', secure: overHttps(c, settings.trustedProxies), expires: expiresAt,
  });
}

export function clearSessionCookie(c: Context, settings: SessionSettings): void {
  deleteCookie(c, SESSION_COOKIE, { httpOnly: true, sameSite: 'Lax', path: '/', secure: overHttps(c, settings.trustedProxies) });
}

/**
 * Refuses a request a browser sent from another site: `Sec-Fetch-Site` other than same-origin (or
 * none: typed by the user), or an `Origin` that is neither the Host's nor PUBLIC_URL's. A request
 * with neither header (not from a browser) passes; the CSRF token still guards cookie writes.
 */
export function checkSameOrigin(c: Context, publicUrl: string | undefined): void {
  const site = c.req.header('Sec-Fetch-Site');
  if (site && site !== 'same-origin' && site !== 'none') {
    throw new ApiError(403, `Cross-site request refused (Sec-Fetch-Site: ${site}): a session is used only by pages of this server`);
  }
  const origin = c.req.header('Origin');
  if (!origin) return;
  let host: string | undefined;
  try {
    host = origin === 'null' ? undefined : new URL(origin).host;
  } catch {
    host = undefined;
  }
  const own = host !== undefined && (host === c.req.header('Host') || (publicUrl !== undefined && new URL(publicUrl).origin === origin));
  if (!own) throw new ApiError(403, `Cross-origin request refused (Origin: ${origin.slice(0, 100)}): a session is used only by pages of this server`);
}

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The session's principal: its user's role, over the user's own vehicles, live mode. */
export function sessionPrincipalOf(session: NonNullable<Awaited<ReturnType<typeof findActiveSession>>>): Principal {
  const role = isRole(session.role) ? session.role : DEFAULT_SESSION_ROLE;
  return {
    role,
    credential: { kind: 'session', id: session.id },
    rateKey: `session-user:${session.user_id}`,
    expiresAt: session.expires_at,
    scope: { accountId: session.account_id, userId: session.user_id, mode: 'live' },
    timezone: session.timezone,
    permissions: [...rolePermissions(role)],
  };
}

/** The session cookie's token, when the request may be judged by it: no Authorization, no X-Api-Key, no stream token. */
export function cookieToken(c: Context): string | undefined {
  if (c.req.header('Authorization') !== undefined || c.req.header('X-Api-Key') !== undefined) return undefined;
  if (c.req.query('token') !== undefined) return undefined;
  const token = getCookie(c, SESSION_COOKIE);
  return token && token.startsWith(SESSION_TOKEN_PREFIX) && token.length <= 100 ? token : undefined;
}

/**
 * Authenticates a request by its session cookie, ONLY when it carries no Authorization or X-Api-Key
 * header (a request with one is judged by it alone, in `authenticate`). A write (POST, PUT, PATCH,
 * DELETE) must come from this server's pages (Origin, Sec-Fetch-Site) and carry the session's CSRF
 * token in X-CSRF-Token; otherwise 403.
 */
export function sessionAuthentication(db: Db, settings: SessionSettings) {
  return createMiddleware<AppEnv & { Variables: { sessionToken: string } }>(async (c, next) => {
    const token = cookieToken(c);
    if (!token) return next();
    const session = await findActiveSession(db, hashApiKey(token));
    if (!session) {
      clearSessionCookie(c, settings);
      throw new ApiError(401, 'Session has ended (signed out, revoked or expired): sign in again at POST /api/v1/auth/sign-in');
    }
    if (WRITES.has(c.req.method)) {
      checkSameOrigin(c, settings.publicUrl);
      const sent = c.req.header(CSRF_HEADER);
      if (!sent) throw new ApiError(403, `CSRF token missing: a write with a session cookie needs the ${CSRF_HEADER} header (csrfToken from GET /api/v1/auth/session)`);
      if (!sameText(sent, csrfTokenOf(token))) throw new ApiError(403, `CSRF token does not match this session (${CSRF_HEADER}); read it again from GET /api/v1/auth/session`);
    }
    c.set('principal', sessionPrincipalOf(session));
    c.set('sessionToken', token);
    if (Date.now() - session.last_seen_at.getTime() > TOUCH_INTERVAL_MS) {
      touchSession(db, session.id, settings.idleMs).catch((error: Error) => c.get('log')?.warn('could not record session use', { error: error.message }));
    }
    await next();
  });
}
