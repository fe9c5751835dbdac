import { timingSafeEqual } from 'node:crypto';
import { createMiddleware } from 'hono/factory';
import type { Logger } from '../../runtime/logger.ts';
import { findKeyById, findKeysByPrefix, type KeyRow } from '../../db/api-keys.ts';
import { touchCredential } from '../../db/credentials.ts';
import { findOauthToken, type OauthTokenRow } from '../../db/oauth-tokens.ts';
import { consumeStreamToken } from '../../db/stream-tokens.ts';
import type { Db } from '../../db/database.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv, Principal } from '../app-env.ts';
import { apiKeyPrefix, hashApiKey } from './api-key-token.ts';
import { ACCESS_TOKEN_PREFIX } from './oauth-credentials.ts';
import { STREAM_TOKEN_PREFIX } from './stream-token.ts';
import { FreshCache } from '../fresh-reads/fresh-cache.ts';
import { effectivePermissions } from '../../domain/access/roles.ts';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="fleetcore"' };
const MAX_KEY_LENGTH = 256;
const TOUCH_INTERVAL_MS = 60_000;

function presentedKey(authorization: string | undefined, apiKeyHeader: string | undefined): string | undefined {
  if (apiKeyHeader?.trim()) return apiKeyHeader.trim();
  if (!authorization) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw new ApiError(401, 'Authorization header must be "Bearer <API key or access token>"', CHALLENGE);
  return match[1];
}

/** Only the event stream takes a credential in its URL (a browser's EventSource cannot send headers). */
const STREAM_PATH = /\/events\/stream$/;

/** Query parameters through which clients commonly try to pass a key. */
const KEY_PARAMETERS = ['token', 'api_key', 'apiKey', 'key', 'access_token'];

/**
 * A key in a URL ends up in proxy logs, browser history and Referer headers: refused outright, so a
 * client learns at once rather than after its key has leaked further.
 */
function refuseKeyInUrl(query: (name: string) => string | undefined): void {
  for (const name of KEY_PARAMETERS) {
    if (query(name)?.startsWith('fc_')) {
      throw new ApiError(401, `API keys and access tokens are never accepted in a URL (${name}=); send them in a header, or open the stream with a token from POST /events/stream-tokens`, CHALLENGE);
    }
  }
}

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** The key a presented string is: found by its clear prefix, its hash compared with each candidate's in constant time. */
async function keyFor(db: Db, key: string, hash: string): Promise<KeyRow | undefined> {
  const prefix = apiKeyPrefix(key);
  if (!prefix) return undefined;
  let found: KeyRow | undefined;
  // Every candidate is compared, so the time taken does not say which one (if any) matched.
  for (const candidate of await findKeysByPrefix(db, prefix)) if (sameHash(candidate.key_hash, hash)) found = candidate;
  return found;
}

function keyPrincipal(row: KeyRow): Principal {
  if (row.revoked_at) throw new ApiError(401, 'API key has been revoked', CHALLENGE);
  if (row.expires_at && row.expires_at.getTime() <= Date.now()) throw new ApiError(401, 'API key has expired', CHALLENGE);
  return {
    credential: { kind: 'api_key', id: row.id },
    rateKey: row.key_hash,
    expiresAt: row.expires_at,
    scope: { accountId: row.account_id, userId: row.user_id, mode: row.mode },
    timezone: row.timezone,
    role: row.role,
    permissions: effectivePermissions(row.permissions, row.role),
  };
}

function tokenPrincipal(row: OauthTokenRow): Principal {
  if (row.revoked_at || row.client_revoked_at) throw new ApiError(401, 'Access token has been revoked', CHALLENGE);
  if (row.expires_at.getTime() <= Date.now()) throw new ApiError(401, 'Access token has expired; ask POST /oauth/token for a new one', CHALLENGE);
  return {
    credential: { kind: 'oauth_token', id: row.id, clientId: row.client_id },
    rateKey: `oauth-client:${row.client_id}`,
    expiresAt: row.expires_at,
    scope: { accountId: row.account_id, userId: row.user_id, mode: row.mode },
    timezone: row.timezone,
    role: row.role,
    permissions: effectivePermissions(row.scopes, row.role),
  };
}

/**
 * Credentials found are reused for half a second and never read more than a second ago, so a
 * revocation or a change of permissions anywhere holds within a second in every process, and a busy
 * client costs two lookups a second instead of one per request. Expiry is checked on every request
 * (at once), and writes through this process's API clear the cache (its own revocations hold at
 * once). Unknown credentials are not kept: a key made elsewhere works on its first request.
 */
export class CredentialCache {
  private readonly rows = new FreshCache<string, KeyRow | OauthTokenRow | undefined>({
    refreshMs: 500, maxAgeMs: 1_000, maxEntries: 10_000, keep: (row) => row !== undefined,
  });

  lookup(hash: string, read: () => Promise<KeyRow | OauthTokenRow | undefined>): Promise<KeyRow | OauthTokenRow | undefined> {
    return this.rows.get(hash, read);
  }

  clear(): void {
    this.rows.clear();
  }
}

/**
 * Resolves `Authorization: Bearer <key or access token>` or `X-Api-Key: <key>` to the credential's
 * user, mode and permissions (a token's scopes), limited by the user's current role (read with the
 * credential, so the cache below keeps a changed role no longer than a revocation); on the event stream only, also a stream token in
 * `?token=` (never cached: each opens one stream, used up as it is checked). Credentials are looked up
 * through `cache`.
 */
export function authenticate(db: Db, log: Logger, cache: CredentialCache = new CredentialCache()) {
  // Last-use times are kept to the minute; remembering when this process last wrote one saves a
  // database write on almost every request.
  const touchedAt = new Map<string, number>();
  const touch = (principal: Principal) => {
    const { credential } = principal;
    if (credential.kind === 'session') return;
    const id = credential.kind === 'api_key' ? `key:${credential.id}` : `client:${credential.clientId}`;
    const now = Date.now();
    if (now - (touchedAt.get(id) ?? 0) < TOUCH_INTERVAL_MS) return;
    if (touchedAt.size > 100_000) touchedAt.clear();
    touchedAt.set(id, now);
    const write = credential.kind === 'api_key' ? touchCredential(db, 'api_key', credential.id) : touchCredential(db, 'oauth_client', credential.clientId);
    write.catch((error: Error) => log.warn('could not record credential use', { credential: id, error: error.message }));
  };
  return createMiddleware<AppEnv>(async (c, next) => {
    // Already signed in by the session cookie (only ever so when no key or token was presented).
    if (c.get('principal')) return next();
    refuseKeyInUrl((name) => c.req.query(name));
    const key = presentedKey(c.req.header('Authorization'), c.req.header('X-Api-Key'));
    const urlToken = c.req.query('token');
    if (!key && urlToken !== undefined && c.req.method === 'GET' && STREAM_PATH.test(c.req.path)) {
      if (!urlToken.startsWith(STREAM_TOKEN_PREFIX) || urlToken.length > MAX_KEY_LENGTH) throw new ApiError(401, 'Invalid stream token', CHALLENGE);
      const credential = await consumeStreamToken(db, hashApiKey(urlToken));
      if (!credential) {
        throw new ApiError(401, 'Stream token is invalid, already used or expired (each opens one stream within 60 s; ask POST /events/stream-tokens for a new one)', CHALLENGE);
      }
      const row = 'apiKeyId' in credential ? await findKeyById(db, credential.apiKeyId) : await findOauthToken(db, { id: credential.oauthTokenId });
      if (!row) throw new ApiError(401, 'Stream token is invalid or has expired', CHALLENGE);
      c.set('principal', 'key_hash' in row ? keyPrincipal(row) : tokenPrincipal(row));
      await next();
      return;
    }
    if (!key) throw new ApiError(401, 'API key required: send "Authorization: Bearer <key>" or "X-Api-Key: <key>"', CHALLENGE);
    if (key.length > MAX_KEY_LENGTH) throw new ApiError(401, 'Invalid API key', CHALLENGE);
    let principal: Principal;
    const hash = hashApiKey(key);
    if (key.startsWith(ACCESS_TOKEN_PREFIX)) {
      const row = (await cache.lookup(hash, () => findOauthToken(db, { hash }))) as OauthTokenRow | undefined;
      if (!row) throw new ApiError(401, 'Invalid access token', CHALLENGE);
      principal = tokenPrincipal(row);
    } else {
      const row = (await cache.lookup(hash, () => keyFor(db, key, hash))) as KeyRow | undefined;
      if (!row) throw new ApiError(401, 'Invalid API key', CHALLENGE);
      principal = keyPrincipal(row);
    }
    c.set('principal', principal);
    touch(principal);
    await next();
  });
}
