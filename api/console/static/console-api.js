// Requests to the fleetcore API with the session cookie; every write carries the session's CSRF token.
// Errors come back as the API words them (its error envelope's `error`).

const API = '/api/v1';

/** An API answer other than 2xx: its status and the API's own message. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

/** The message to show for a failed request: the API's own words. */
export const problemText = (error) => error?.message ?? String(error);

/**
 * A client for one signed-in session. `onUnauthorized` runs on a 401 (the session ended, here or
 * elsewhere): nothing later can succeed with it.
 */
export function consoleApi(csrfToken, onUnauthorized) {
  async function request(method, path, body) {
    const headers = { Accept: 'application/json' };
    if (method !== 'GET') headers['X-CSRF-Token'] = csrfToken;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response;
    try {
      response = await fetch(API + path, {
        method, headers, credentials: 'same-origin', cache: 'no-store', body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new ApiError(0, 'The server cannot be reached');
    }
    if (response.status === 204) return null;
    const answer = await response.json().catch(() => null);
    if (response.ok) return answer;
    const failure = new ApiError(response.status, answer?.error ?? `${response.status} ${response.statusText}`);
    if (response.status === 401) onUnauthorized(failure);
    throw failure;
  }
  return {
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, body ?? {}),
    put: (path, body) => request('PUT', path, body),
    patch: (path, body) => request('PATCH', path, body),
    delete: (path) => request('DELETE', path),
    /** Every item of a paginated list (follows `next_cursor`, 100 a page: every list allows that), up to `max`. */
    async all(path, max = 2000) {
      const items = [];
      let cursor;
      do {
        const separator = path.includes('?') ? '&' : '?';
        const page = await request('GET', `${path}${separator}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        items.push(...page.data);
        cursor = page.next_cursor ?? null;
      } while (cursor && items.length < max);
      return items;
    },
  };
}
