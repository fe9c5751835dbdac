/**
 * What kind of refusal a DomainError is. The API answers each with one status (api/error-response.ts:
 * 400, 403, 404, 409), the command line with its message; the code, not the class, decides.
 */
export type DomainErrorCode = 'invalid' | 'forbidden' | 'not_found' | 'conflict';

/** A request that the rules or the data cannot satisfy; the message is written for the person who sent it. */
export class DomainError extends Error {
  override name = 'DomainError';
  constructor(
    readonly code: DomainErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Runs `parse`, naming `field` at the head of the message of any DomainError it throws
 * (`events: unknown event type "x"; …`), so a rule that knows nothing of requests still says
 * which part of one was wrong.
 */
export function inField<T>(field: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof DomainError) throw new DomainError(error.code, `${field}: ${error.message}`);
    throw error;
  }
}
