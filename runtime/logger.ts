import pino from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger whose every line also carries `bindings` (a request id, a job id). */
  child(bindings: Record<string, unknown>): Logger;
}

function wrap(base: pino.Logger): Logger {
  return {
    // pino takes the fields first; ours read message first, as the call sites always have.
    debug: (message, fields) => base.debug(fields ?? {}, message),
    info: (message, fields) => base.info(fields ?? {}, message),
    warn: (message, fields) => base.warn(fields ?? {}, message),
    error: (message, fields) => base.error(fields ?? {}, message),
    child: (bindings) => wrap(base.child(bindings)),
  };
}

/**
 * JSON lines (pino) on stderr, so stdout stays free for command output (`--json`): `time` in ISO
 * 8601, `level` as its name, `msg`, the process id, then the line's fields. Written synchronously so
 * the last lines before an exit are never lost. `write` replaces stderr (tests read the lines).
 */
export function createLogger(level: LogLevel, write?: (line: string) => void): Logger {
  const destination = write ? { write } : pino.destination({ dest: 2, sync: true });
  return wrap(
    pino(
      {
        level,
        base: { pid: process.pid },
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      destination,
    ),
  );
}

export const silentLogger: Logger = createLogger('silent');
