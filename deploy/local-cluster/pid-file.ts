import { existsSync, readFileSync, rmSync } from 'node:fs';

/** The pid a daemon wrote (the first line, as PostgreSQL's postmaster.pid has it too); undefined without the file. */
export function readPid(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]!.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/**
 * Whether `pid` is a live process whose command line mentions `expected` (`redis-server`, `fleet.js`):
 * after a reboot or a crash a stale pid file may name an unrelated process that must not be signalled.
 */
export function isRunning(pid: number | undefined, expected: string): pid is number {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (/\) Z /.test(state)) return false; // exited, waiting for its parent to reap it
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(expected);
  } catch {
    return true; // no /proc: trust the signal
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends `signal`, waits up to `graceMs` for the process to go, then SIGKILL. Resolves whether or not it
 * was running, and removes `pidFile` (a daemon killed does not remove its own).
 */
export async function stopProcess(pidFile: string, expected: string, signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000): Promise<'stopped' | 'not running'> {
  const pid = readPid(pidFile);
  if (!isRunning(pid, expected)) {
    rmSync(pidFile, { force: true });
    return 'not running';
  }
  process.kill(pid, signal);
  const deadline = Date.now() + graceMs;
  while (isRunning(pid, expected) && Date.now() < deadline) await sleep(50);
  if (isRunning(pid, expected)) process.kill(pid, 'SIGKILL');
  while (isRunning(pid, expected)) await sleep(20);
  rmSync(pidFile, { force: true });
  return 'stopped';
}
