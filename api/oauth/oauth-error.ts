import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** The error codes of RFC 6749 §5.2 (and RFC 7009's `unsupported_token_type`). */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unsupported_token_type';

/**
 * An error of the OAuth endpoints, answered as RFC 6749 §5.2 says: `{"error", "error_description"}`
 * as JSON, 400, or 401 with a `WWW-Authenticate` challenge when the client could not be authenticated.
 */
export class OAuthError extends Error {
  override name = 'OAuthError';
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description);
  }

  get status(): ContentfulStatusCode {
    return this.code === 'invalid_client' ? 401 : 400;
  }

  get headers(): Record<string, string> {
    const base = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
    return this.code === 'invalid_client' ? { ...base, 'WWW-Authenticate': 'Basic realm="fleetcore", charset="UTF-8"' } : base;
  }

  get body(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description };
  }
}
