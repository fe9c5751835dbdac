import { existsSync } from 'node:fs';
import { StartupError } from '../runtime/startup-error.ts';

/**
 * Reads settings from a `.env` file in the working directory (or the file ENV_FILE names; ENV_FILE=
 * empty reads none) into the environment. Variables already set in the environment win, so a
 * deployment can override the file without editing it.
 */
export function loadEnvFile(env: NodeJS.ProcessEnv = process.env): void {
  const named = env.ENV_FILE;
  const file = named ?? '.env';
  if (file === '') return;
  if (!existsSync(file)) {
    if (named !== undefined) throw new StartupError(`ENV_FILE ${file} does not exist`);
    return;
  }
  try {
    process.loadEnvFile(file);
  } catch (error) {
    throw new StartupError(`cannot read ${file}: ${(error as Error).message}`);
  }
}
