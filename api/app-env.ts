import type { AccessScope } from '../db/access-scope.ts';
import type { Logger } from '../runtime/logger.ts';
import type { Role } from '../domain/access/roles.ts';

/** What authenticated a request: an API key, an OAuth access token of a client, or a signed-in user's session cookie. */
export type Credential = { kind: 'api_key'; id: number } | { kind: 'oauth_token'; id: string; clientId: number } | { kind: 'session'; id: string };

/** Who is calling: resolved from the API key or access token by the authentication middleware. */
export interface Principal {
  credential: Credential;
  /** Identifies the caller to the rate limiter without exposing it: the key's hash, or the OAuth client (all its tokens share one limit). */
  rateKey: string;
  /** When the credential stops working (null: never); what it creates lives no longer. */
  expiresAt: Date | null;
  scope: AccessScope;
  timezone: string;
  /** The credential's user's role, as read with the credential. */
  role: Role;
  /** The credential's own permissions (a token's scopes) limited by the role. */
  permissions: string[];
}

export interface AppEnv {
  Variables: {
    principal: Principal;
    /** The request's id (x-request-id) and a logger whose lines carry it. */
    requestId: string;
    log: Logger;
  };
}
