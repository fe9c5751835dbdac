export type DomainErrorCode = 'invalid' | 'not_found' | 'conflict';

/** A request that the data cannot satisfy; the message is written for the person who sent it. */
export class DomainError extends Error {
  override name = 'DomainError';
  constructor(
    readonly code: DomainErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const UNIQUE_VIOLATION = '23505';

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string };
  return e?.code === UNIQUE_VIOLATION && (constraint === undefined || e.constraint === constraint);
}
