import { execFile } from 'node:child_process';
import { environment, FLEET, root } from './fleet-process.ts';

export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `fleet ARGS` as a process against the database `env` names. Asynchronous on purpose: in embedded
 * mode the database is served by this test process, which must keep answering while the command runs.
 */
export function runFleet(args: string[], env: Record<string, string>, timeoutMs = 90_000): Promise<CommandRun> {
  return new Promise((done) => {
    execFile(process.execPath, [FLEET, ...args], { cwd: root, env: environment(env), timeout: timeoutMs }, (error, stdout, stderr) => {
      const code = (error as { code?: unknown } | null)?.code;
      done({ code: error ? (typeof code === 'number' ? code : null) : 0, stdout, stderr });
    });
  });
}
