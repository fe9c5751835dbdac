import { createMiddleware } from 'hono/factory';
import type { Logger } from '../../runtime/logger.ts';
import { findKeyByHash, touchApiKey } from '../../db/api-keys.ts';
import { findKeyByStreamToken } from '../../db/stream-tokens.ts';
import type { Db } from '../../db/database.ts';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';
import { hashApiKey } from './api-key-token.ts';
import { STREAM_TOKEN_PREFIX } from './stream-token.ts';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="fleetcore"' };
const MAX_KEY_LENGTH = 256;
const TOUCH_INTERVAL_MS = 60_000;

function presentedKey(authorization: string | undefined, apiKeyHeader: string | undefined): string | undefined {
  if (apiKeyHeader?.trim()) return apiKeyHeader.trim();
  if (!authorization) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw new ApiError(401, 'Authorization header must be "Bearer <API key>"', CHALLENGE);
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
      throw new ApiError(401, `API keys are never accepted in a URL (${name}=); send the key in a header, or open the stream with a token from POST /events/stream-tokens`, CHALLENGE);
    }
  }
}

/**
 * Resolves `Authorization: Bearer <key>` or `X-Api-Key: <key>` to the key's user, mode and
 * permissions; on the event stream only, also a stream token in `?token=`.
 */
export function authenticate(db: Db, log: Logger) {
  // Last-use times are kept to the minute; remembering when this process last wrote one saves a
  // database write on almost every request.
  const touchedAt = new Map<number, number>();
  const touch = (keyId: number) => {
    const now = Date.now();
    if (now - (touchedAt.get(keyId) ?? 0) < TOUCH_INTERVAL_MS) return;
    if (touchedAt.size > 100_000) touchedAt.clear();
    touchedAt.set(keyId, now);
    touchApiKey(db, keyId).catch((error: Error) => log.warn('could not record API key use', { keyId, error: error.message }));
  };
  return createMiddleware<AppEnv>(async (c, next) => {
    refuseKeyInUrl((name) => c.req.query(name));
    const key = presentedKey(c.req.header('Authorization'), c.req.header('X-Api-Key'));
    const urlToken = c.req.query('token');
    if (!key && urlToken !== undefined && c.req.method === 'GET' && STREAM_PATH.test(c.req.path)) {
      if (!urlToken.startsWith(STREAM_TOKEN_PREFIX) || urlToken.length > MAX_KEY_LENGTH) throw new ApiError(401, 'Invalid stream token', CHALLENGE);
      const row = await findKeyByStreamToken(db, hashApiKey(urlToken));
      if (!row) throw new ApiError(401, 'Stream token is invalid or has expired (tokens last 60 s; ask POST /events/stream-tokens for a new one)', CHALLENGE);
      if (row.revoked_at) throw new ApiError(401, 'API key has been revoked', CHALLENGE);
      if (row.expires_at && row.expires_at.getTime() <= Date.now()) throw new ApiError(401, 'API key has expired', CHALLENGE);
      c.set('principal', {
        keyId: row.id,
        keyHash: row.key_hash,
        scope: { accountId: row.account_id, userId: row.user_id, mode: row.mode },
        timezone: row.timezone,
        permissions: row.permissions,
      });
      await next();
      return;
    }
    if (!key) throw new ApiError(401, 'API key required: send "Authorization: Bearer <key>" or "X-Api-Key: <key>"', CHALLENGE);
    if (key.length > MAX_KEY_LENGTH) throw new ApiError(401, 'Invalid API key', CHALLENGE);
    const keyHash = hashApiKey(key);
    const row = await findKeyByHash(db, keyHash);
    if (!row) throw new ApiError(401, 'Invalid API key', CHALLENGE);
    if (row.revoked_at) throw new ApiError(401, 'API key has been revoked', CHALLENGE);
    if (row.expires_at && row.expires_at.getTime() <= Date.now()) throw new ApiError(401, 'API key has expired', CHALLENGE);
    c.set('principal', {
      keyId: row.id,
      keyHash,
      scope: { accountId: row.account_id, userId: row.user_id, mode: row.mode },
      timezone: row.timezone,
      permissions: row.permissions,
    });
    touch(row.id);
    await next();
  });
}
