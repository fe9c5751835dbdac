import type { Context } from 'hono';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Db } from '../../db/database.ts';
import { findOauthToken, insertOauthToken, revokeOauthToken } from '../../db/oauth-tokens.ts';
import type { Logger } from '../../runtime/logger.ts';
import { hashApiKey } from '../auth/api-key-token.ts';
import { issueAccessToken } from '../auth/oauth-credentials.ts';
import { ALL_PERMISSIONS, covers, normalisePermissions, PermissionListError, PERMISSIONS } from '../../domain/access/permissions.ts';
import type { Blocked } from '../auth/failed-authentication-limit.ts';
import type { RateLimiter } from '../rate-limit/rate-limiter.ts';
import { authenticateClient, type OAuthForm } from './client-authentication.ts';
import { OAuthError } from './oauth-error.ts';

export interface OAuthSettings {
  /** Seconds an access token lives (OAUTH_TOKEN_TTL_S). */
  tokenTtlS: number;
  /** PUBLIC_URL: the issuer identifier; by default the origin the request came to. */
  publicUrl?: string;
}

export interface OAuthLimits {
  /** Counts a failed client authentication of the request's address; says whether the address is over the limit. */
  clientFailed(c: Context): Promise<Blocked | undefined>;
  /** Tokens issued per client (OAUTH_TOKEN_RATE_LIMIT a minute): a client asking for more is misbehaving. */
  tokens: RateLimiter;
}

const MAX_FORM_BYTES = 16 * 1024;
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/** The request body as RFC 6749 §3.2 wants it: form-urlencoded, each parameter at most once. */
async function readForm(c: Context): Promise<OAuthForm> {
  const type = c.req.header('Content-Type') ?? '';
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
    throw new OAuthError('invalid_request', 'the body must be application/x-www-form-urlencoded');
  }
  // At most MAX_FORM_BYTES arrive here: the body limit in front stops a larger one as it streams in.
  const text = await c.req.text();
  const form: OAuthForm = new Map();
  for (const [name, value] of new URLSearchParams(text)) {
    if (form.has(name)) throw new OAuthError('invalid_request', `parameter ${name} is given more than once`);
    form.set(name, value);
  }
  return form;
}

function issuer(c: Context, settings: OAuthSettings): string {
  return (settings.publicUrl ?? new URL(c.req.url).origin).replace(/\/+$/, '');
}

/** A token's scope parameter as permission names; each must be one the client holds (RFC 6749 §3.3). */
function grantedScopes(requested: string | undefined, clientScopes: string[]): string[] {
  if (requested === undefined) return clientScopes;
  let names: string[];
  try {
    names = normalisePermissions(requested.split(' '), 'scope');
  } catch (error) {
    if (error instanceof PermissionListError) throw new OAuthError('invalid_scope', error.message);
    throw error;
  }
  if (!covers(clientScopes, names)) throw new OAuthError('invalid_scope', `the client may be granted only ${clientScopes.join(' ')}`);
  return names;
}

/**
 * The OAuth 2.0 authorization server for machine-to-machine integrations: the client credentials
 * grant (RFC 6749 §4.4), token revocation (RFC 7009), introspection (RFC 7662) and the server's
 * metadata (RFC 8414). Tokens are opaque, stored as hashes, and accepted by the API wherever an API
 * key is, with their scopes as permissions.
 */
export function oauthRoutes(db: Db, log: Logger, settings: OAuthSettings, limits: OAuthLimits) {
  const app = new Hono<{ Variables: { log?: Logger } }>();

  app.onError(async (error, c) => {
    if (error instanceof OAuthError) {
      const blocked = error.code === 'invalid_client' ? await limits.clientFailed(c) : undefined;
      if (blocked) {
        return c.json({ error: 'invalid_client', error_description: blocked.message }, 429, { ...NO_STORE, 'Retry-After': String(blocked.retryAfterSeconds) });
      }
      return c.json(error.body, error.status, error.headers);
    }
    (c.get('log') ?? log).error('OAuth endpoint failed', { path: c.req.path, error: (error as Error).stack ?? String(error) });
    return c.json({ error: 'server_error', error_description: 'Internal server error' }, 500, NO_STORE);
  });

  // Bounded before a byte is read: a declared length over it is refused at once, a chunked body as it passes it.
  app.use('/oauth/*', bodyLimit({
    maxSize: MAX_FORM_BYTES,
    onError: (c) => c.json({ error: 'invalid_request', error_description: `the body is larger than ${MAX_FORM_BYTES} bytes` }, 413, NO_STORE),
  }));

  app.post('/oauth/token', async (c) => {
    const form = await readForm(c);
    const grantType = form.get('grant_type');
    if (!grantType) throw new OAuthError('invalid_request', 'grant_type is required');
    const client = await authenticateClient(db, c.req.header('Authorization'), form);
    if (grantType !== 'client_credentials') throw new OAuthError('unsupported_grant_type', 'only the client_credentials grant is supported');
    // Counted per client once it has authenticated, so nobody else can use up a client's allowance.
    const allowance = await limits.tokens.hit(`oauth-token:${client.id}`).catch((error: Error) => {
      (c.get('log') ?? log).warn('token rate limiter unavailable; token issued', { error: error.message });
      return undefined;
    });
    if (allowance && !allowance.allowed) {
      return c.json(
        { error: 'invalid_request', error_description: `too many token requests: ${allowance.limit} a minute per client; reuse the token until it expires (retry in ${allowance.resetSeconds} s)` },
        429,
        { ...NO_STORE, 'Retry-After': String(allowance.resetSeconds) },
      );
    }
    const scopes = grantedScopes(form.get('scope'), client.scopes);
    const ttlMs = settings.tokenTtlS * 1000;
    const expiresAt = new Date(Math.min(Date.now() + ttlMs, client.expires_at?.getTime() ?? Infinity));
    const { token, hash } = issueAccessToken();
    await insertOauthToken(db, { tokenHash: hash, clientId: client.id, scopes, expiresAt });
    return c.json(
      { access_token: token, token_type: 'Bearer', expires_in: Math.max(1, Math.floor((expiresAt.getTime() - Date.now()) / 1000)), scope: scopes.join(' ') },
      200,
      NO_STORE,
    );
  });

  app.post('/oauth/revoke', async (c) => {
    const form = await readForm(c);
    const client = await authenticateClient(db, c.req.header('Authorization'), form);
    const token = form.get('token');
    if (!token) throw new OAuthError('invalid_request', 'token is required');
    // RFC 7009 §2.2: an unknown token, or one of another client, is answered the same as a revoked one.
    await revokeOauthToken(db, hashApiKey(token), client.id);
    return c.body(null, 200, NO_STORE);
  });

  app.post('/oauth/introspect', async (c) => {
    const form = await readForm(c);
    const client = await authenticateClient(db, c.req.header('Authorization'), form);
    const token = form.get('token');
    if (!token) throw new OAuthError('invalid_request', 'token is required');
    const row = await findOauthToken(db, { hash: hashApiKey(token) });
    // A client learns only about tokens acting as its own user and mode (RFC 7662 §4: inactive otherwise).
    const visible = row && row.user_id === client.user_id && row.mode === client.mode;
    const active = visible && !row.revoked_at && !row.client_revoked_at && row.expires_at.getTime() > Date.now();
    if (!active) return c.json({ active: false }, 200, NO_STORE);
    return c.json(
      {
        active: true,
        scope: row.scopes.join(' '),
        client_id: row.public_client_id,
        token_type: 'Bearer',
        exp: Math.floor(row.expires_at.getTime() / 1000),
        iat: Math.floor(row.created_at.getTime() / 1000),
        sub: String(row.user_id),
        iss: issuer(c, settings),
        mode: row.mode,
      },
      200,
      NO_STORE,
    );
  });

  app.get('/.well-known/oauth-authorization-server', (c) => {
    const base = issuer(c, settings);
    const methods = ['client_secret_basic', 'client_secret_post'];
    return c.json({
      issuer: base,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      introspection_endpoint: `${base}/oauth/introspect`,
      grant_types_supported: ['client_credentials'],
      // No authorization endpoint: machine-to-machine clients only.
      response_types_supported: [],
      token_endpoint_auth_methods_supported: methods,
      revocation_endpoint_auth_methods_supported: methods,
      introspection_endpoint_auth_methods_supported: methods,
      scopes_supported: [...PERMISSIONS, ALL_PERMISSIONS],
      service_documentation: `${base}/docs`,
    });
  });

  return app;
}
