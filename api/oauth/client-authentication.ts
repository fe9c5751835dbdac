import { timingSafeEqual } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import { findOauthClient, type OauthClientRow } from '../../db/oauth-clients.ts';
import { hashApiKey } from '../auth/api-key-token.ts';
import { OAuthError } from './oauth-error.ts';

/** The form parameters of an OAuth request, each given at most once (RFC 6749 §3.2). */
export type OAuthForm = Map<string, string>;

/** `client_id:client_secret`, each form-urlencoded, then base64 (RFC 6749 §2.3.1). */
function basicCredentials(authorization: string | undefined): { id: string; secret: string } | undefined {
  if (!authorization) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=._~-]+)\s*$/i.exec(authorization);
  if (!match) throw new OAuthError('invalid_client', 'the Authorization header must be "Basic <base64 of client_id:client_secret>"');
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new OAuthError('invalid_client', 'the Basic credentials must be client_id:client_secret');
  const unform = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      throw new OAuthError('invalid_client', 'the Basic credentials are not form-urlencoded');
    }
  };
  return { id: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
}

// Compared against when the client id is unknown, so an unknown id takes as long as a wrong secret.
const NO_CLIENT_HASH = hashApiKey('no such client');

/**
 * The client a request authenticates as: HTTP Basic (client_secret_basic) or `client_id` and
 * `client_secret` in the form (client_secret_post), not both. The secret's hash is compared in
 * constant time; a revoked or expired client is refused like a wrong secret (invalid_client).
 */
export async function authenticateClient(db: Db, authorization: string | undefined, form: OAuthForm): Promise<OauthClientRow> {
  const basic = basicCredentials(authorization);
  const posted = form.has('client_id') || form.has('client_secret') ? { id: form.get('client_id') ?? '', secret: form.get('client_secret') ?? '' } : undefined;
  if (basic && posted) throw new OAuthError('invalid_request', 'authenticate the client one way: the Authorization header or client_id/client_secret in the body, not both');
  const presented = basic ?? posted;
  if (!presented) throw new OAuthError('invalid_client', 'client authentication is required (HTTP Basic, or client_id and client_secret in the body)');
  const client = presented.id.length > 0 && presented.id.length <= 100 ? await findOauthClient(db, presented.id) : undefined;
  const hash = Buffer.from(hashApiKey(presented.secret));
  const matches = timingSafeEqual(hash, Buffer.from(client?.secret_hash ?? NO_CLIENT_HASH));
  if (!client || !matches) throw new OAuthError('invalid_client', 'unknown client or wrong secret');
  if (client.revoked_at) throw new OAuthError('invalid_client', 'the client has been revoked');
  if (client.expires_at && client.expires_at.getTime() <= Date.now()) throw new OAuthError('invalid_client', 'the client has expired');
  return client;
}
