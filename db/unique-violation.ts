const UNIQUE_VIOLATION = '23505';

/** Whether a query failed on a unique constraint (`constraint`, or any); callers turn it into a DomainError saying what is taken. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string };
  return e?.code === UNIQUE_VIOLATION && (constraint === undefined || e.constraint === constraint);
}
