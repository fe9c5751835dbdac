/**
 * What a failed write says about what to do next, read from its SQLSTATE (or, for a connection that
 * never reached the server, from the socket error):
 * - `retryable`: the database is unreachable, restarting, out of connections, or the transaction lost
 *   a serialization or deadlock race. The same write can succeed later.
 * - `data`: the rows are at fault (class 22 data exception, class 23 integrity violation). Retrying the
 *   same rows fails again; other rows would not.
 * - `fatal`: anything else (an undefined column after a bad deploy, permission denied, disk full): no
 *   retry helps until an operator acts, so it is reported at once instead of retried silently.
 */
export type WriteFailureKind = 'retryable' | 'data' | 'fatal';

const RETRYABLE_STATES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '53300', // too_many_connections
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '57014', // query_canceled (statement timeout, or a cancel during failover)
  '55000', // object_not_in_prerequisite_state: "database is not currently accepting connections"
]);

const RETRYABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOENT']);

// node-postgres reports a lost or unobtainable connection with these messages and no code.
const RETRYABLE_MESSAGES = /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended|not queryable/i;

export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

export function classifyWriteFailure(error: unknown): WriteFailureKind {
  const state = sqlState(error);
  if (state) {
    if (state.startsWith('08') || RETRYABLE_STATES.has(state)) return 'retryable';
    if (state.startsWith('22') || state.startsWith('23')) return 'data';
    return 'fatal';
  }
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string' && RETRYABLE_SOCKET_CODES.has(code)) return 'retryable';
  if (RETRYABLE_MESSAGES.test((error as Error)?.message ?? '')) return 'retryable';
  return 'fatal';
}
