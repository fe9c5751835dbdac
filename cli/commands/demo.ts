import { parseCommand } from '../command-line.ts';
import type { Config } from '../config.ts';
import { randomBytes } from 'node:crypto';
import { hashPassword } from '../../api/auth/password-hash.ts';
import { setPasswordHash } from '../../db/user-passwords.ts';
import type { Db } from '../../db/database.ts';
import { DEMO_EMAIL, demoInstructions, seedDemo } from '../demo-seed.ts';
import { printResult } from '../output.ts';
import { withDatabase } from '../with-database.ts';

export const demoUsage = 'fleet demo [--json]';

export function localBaseUrl(config: Config): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}

/** A random first password for the demo user, set and returned to be printed once. */
export async function setDemoPassword(db: Db, userId: number): Promise<string> {
  const password = randomBytes(12).toString('base64url');
  await setPasswordHash(db, userId, await hashPassword(password));
  return password;
}

/** The line that tells the demo user where and how to sign in. */
export const demoSignIn = (baseUrl: string, password: string) =>
  `Sign in to the console at ${baseUrl}/console (and the live map at ${baseUrl}/map) as ${DEMO_EMAIL} with the password ${password} (shown once).`;

export async function demoCommand(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, {});
  const { seed, password } = await withDatabase(config, async ({ db }) => {
    const seeded = await seedDemo(db);
    return { seed: seeded, password: await setDemoPassword(db, seeded.userId) };
  });
  printResult(parsed.json, { ...seed, email: DEMO_EMAIL, password }, [...demoInstructions(seed, localBaseUrl(config)), demoSignIn(localBaseUrl(config), password)]);
}
