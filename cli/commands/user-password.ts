import { findUser } from '../../db/users.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { parseCommand, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';
import { issueSignInLink } from '../../api/auth/sign-in-link.ts';
import { withDatabase } from '../with-database.ts';
import { localBaseUrl } from './demo.ts';

export const resetPasswordUsage = 'fleet user reset-password --user ID|EMAIL [--json]';

/** PUBLIC_URL, or this server's own address (http://localhost:PORT). */
export const publicBaseUrl = (config: Config) => config.access.publicUrl ?? localBaseUrl(config);

/** `fleet user reset-password`: prints a new one-time link to set the user's password (24 hours). */
export async function userResetPasswordCommand(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, { user: { type: 'string' } });
  const who = requiredString(parsed, 'user');
  const { user, link } = await withDatabase(config, async ({ db }) => {
    const found = await findUser(db, who);
    if (!found) throw new DomainError('not_found', `user ${who} does not exist`);
    return { user: found, link: await issueSignInLink(db, found.id, publicBaseUrl(config)) };
  });
  printResult(
    parsed.json,
    { userId: user.id, email: user.email, setPasswordUrl: link.url, expiresAt: link.expiresAt.toISOString() },
    [`one-time link for ${user.email} to set a password (works once, until ${link.expiresAt.toISOString()}):`, link.url],
  );
}
