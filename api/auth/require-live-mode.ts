import { createMiddleware } from 'hono/factory';
import { ApiError } from '../api-error.ts';
import type { AppEnv } from '../app-env.ts';

/**
 * Refuses a test-mode credential (an API key or an OAuth token of a test client) with 403, for what
 * is the account's in both modes: a test key only reaches test data, so it must not change what live
 * keys go by. `refusal` says what is refused and what to use instead. A session is always live.
 */
export function requireLiveMode(refusal: string) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (c.get('principal').scope.mode !== 'live') throw new ApiError(403, refusal);
    await next();
  });
}
