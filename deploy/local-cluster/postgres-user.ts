import { execFile } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, statSync } from 'node:fs';
import { promisify } from 'node:util';

const exec = promisify(execFile);

const asRoot = process.getuid?.() === 0;

/**
 * Runs a program and resolves with its stdout; fails with its stderr. PostgreSQL's programs and
 * PgBouncer refuse to run as root, so as root `asPostgres` runs them as the postgres user
 * (`runuser`), which then owns their directories (see `ownedDirectory`).
 */
export async function run(file: string, args: readonly string[], options: { asPostgres?: boolean; timeoutMs?: number } = {}): Promise<string> {
  const [program, argv] = options.asPostgres && asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, [...args]];
  try {
    const { stdout } = await exec(program, argv, { timeout: options.timeoutMs ?? 120_000 });
    return stdout;
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${file} ${args.join(' ')} failed: ${stderr?.trim() || stdout?.trim() || (error as Error).message}`);
  }
}

let postgresIds: { uid: number; gid: number } | undefined;

/** Makes `dir` (and its parents), owned by the postgres user when running as root. */
export async function ownedDirectory(dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  if (asRoot) {
    postgresIds ??= { uid: Number((await run('id', ['-u', 'postgres'])).trim()), gid: Number((await run('id', ['-g', 'postgres'])).trim()) };
    chownSync(dir, postgresIds.uid, postgresIds.gid);
  }
  return dir;
}

/** As root: lets the postgres user pass through `dir` (a mkdtemp directory is 0700) to the directories it owns below. */
export function passableByPostgres(dir: string): void {
  if (!asRoot) return;
  const mode = statSync(dir).mode & 0o777;
  if ((mode & 0o001) === 0) chmodSync(dir, mode | 0o001);
}
