export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** JSON lines on stderr, so stdout stays free for command output (`--json`). */
export function createLogger(level: LogLevel, write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const threshold = RANK[level];
  const emit = (lvl: Exclude<LogLevel, 'silent'>, message: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < threshold) return;
    write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg: message, ...fields })}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

export const silentLogger: Logger = createLogger('silent');
