import { readFileSync } from 'node:fs';

/** What is assumed when the limit cannot be read (not Linux): the usual soft limit of a login shell. */
const FALLBACK = 1024;

/** The soft limit on open files of this process (`ulimit -n`), read from /proc on Linux. */
export function openFileLimit(limits: () => string = () => readFileSync('/proc/self/limits', 'utf8')): number {
  try {
    const line = limits()
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    if (soft === 'unlimited') return Number.MAX_SAFE_INTEGER;
    const value = Number(soft);
    return Number.isInteger(value) && value > 0 ? value : FALLBACK;
  } catch {
    return FALLBACK;
  }
}

/**
 * Connections one listener accepts by default: the open-file limit less what the process needs besides
 * its connections (database pool, Redis, PGlite's files, log streams). Past it a listener refuses new
 * connections cleanly instead of running out of descriptors.
 */
export function defaultMaxConnections(limit = openFileLimit()): number {
  return Math.max(16, limit - 256);
}
