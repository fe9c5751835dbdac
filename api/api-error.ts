import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** An error answered with its status and message in the envelope; thrown from handlers and middleware. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}
