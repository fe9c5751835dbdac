import type { Context, ErrorHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { DomainError, type DomainErrorCode } from '../domain/domain-error.ts';
import type { Logger } from '../runtime/logger.ts';
import { ApiError } from './api-error.ts';
import { errorEnvelope } from './envelope.ts';

/**
 * The status of each kind of DomainError. Handlers throw the rule's or the query's own error and
 * never translate it: this table is the one place a refusal becomes a status.
 */
const DOMAIN_STATUS: Record<DomainErrorCode, ContentfulStatusCode> = { invalid: 400, forbidden: 403, not_found: 404, conflict: 409 };

const UNTRANSLATABLE_CHARACTER = '22021';

/** The app's onError: every error a request ends in, answered in the error envelope. */
export function errorResponse(log: Logger): ErrorHandler {
  return (error, c: Context) => {
    if (error instanceof ApiError) return c.json(errorEnvelope(error.message), error.status, error.headers);
    if (error instanceof DomainError) return c.json(errorEnvelope(error.message), DOMAIN_STATUS[error.code]);
    if (error instanceof HTTPException) return c.json(errorEnvelope(error.message || 'Bad request'), error.status);
    // PostgreSQL text cannot hold U+0000; whichever parameter carried one, the request is at fault.
    if ((error as { code?: string }).code === UNTRANSLATABLE_CHARACTER) return c.json(errorEnvelope('Text must not contain NUL characters'), 400);
    (c.get('log') ?? log).error('unhandled error', { method: c.req.method, path: c.req.path, error: (error as Error).stack ?? String(error) });
    return c.json(errorEnvelope('Internal server error'), 500);
  };
}
