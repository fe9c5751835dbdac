// Calls to the fleetcore API with the key in the Authorization header (never in a URL), or, signed in,
// with the session cookie and its CSRF token on writes.

const API = '/api/v1';

/** An API answer other than 2xx: its status and the message of the error envelope. */
export class ApiRequestError extends Error {
  constructor(status, message, retryAfterS) {
    super(message);
    this.name = 'ApiRequestError';
    this.status = status;
    this.retryAfterS = retryAfterS;
  }
}

/**
 * A client for one key. `onUnauthorized` runs on any 401 (a key revoked or expired mid-session): the
 * page goes back to the login box, since no later request with that key can succeed. Once `signal`
 * aborts (the session ended), requests in flight and later ones fail with that abort.
 */
export function apiClient(key, signal, onUnauthorized, csrfToken) {
  async function request(method, path) {
    let response;
    try {
      const headers = key ? { Authorization: `Bearer ${key}`, Accept: 'application/json' } : { Accept: 'application/json' };
      if (!key && method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
      response = await fetch(API + path, { method, headers, cache: 'no-store', credentials: 'same-origin', signal });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new ApiRequestError(0, 'The server cannot be reached');
    }
    const body = await response.json().catch(() => null);
    if (response.ok) return body;
    const message = body?.error ?? `${response.status} ${response.statusText}`;
    const retryAfter = Number(response.headers.get('Retry-After'));
    const failure = new ApiRequestError(response.status, message, Number.isFinite(retryAfter) ? retryAfter : undefined);
    if (response.status === 401) onUnauthorized(failure);
    throw failure;
  }
  return {
    signedIn: !key,
    get: (path) => request('GET', path),
    post: (path) => request('POST', path),
  };
}
