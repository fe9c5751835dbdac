import { parseCommand } from '../command-line.ts';
import type { Config } from '../config.ts';
import { randomBytes } from 'node:crypto';
import { hashPassword } from '../../api/auth/password-hash.ts';
import { setPasswordHash } from '../../db/user-passwords.ts';
import { DEMO_EMAIL, demoInstructions, seedDemo } from '../demo-seed.ts';
import { printResult } from '../output.ts';
import { withDatabase } from '../with-database.ts';

export const demoUsage = 'fleet demo [--json]';

export function localBaseUrl(config: Config): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

export async function demoCommand(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, {});
  // The demo user signs in to the map with this password, printed once.
  const password = randomBytes(12).toString('base64url');
  const seed = await withDatabase(config, async ({ db }) => {
    const seeded = await seedDemo(db);
    await setPasswordHash(db, seeded.userId, await hashPassword(password));
    return seeded;
  });
  const signIn = `Sign in at ${localBaseUrl(config)}/map as ${DEMO_EMAIL} with the password ${password} (shown once), or paste the API key.`;
  printResult(parsed.json, { ...seed, email: DEMO_EMAIL, password }, [...demoInstructions(seed, localBaseUrl(config)), signIn]);
}
