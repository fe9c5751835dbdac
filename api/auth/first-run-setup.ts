import { randomBytes } from 'node:crypto';
import type { Db } from '../../db/database.ts';
import { insertFirstRunToken } from '../../db/first-run-tokens.ts';
import { hashApiKey } from './api-key-token.ts';

export const SETUP_TOKEN_PREFIX = 'fst_';

/**
 * How long a printed setup link works. Long enough to open it the next morning; short enough that a
 * link left in an old log of a server nobody set up does not stay a way in. A restart prints another.
 */
export const SETUP_TOKEN_LIFETIME_MS = 24 * 3_600_000;

/**
 * A new one-time token that lets the first person create the first account and its owner from the
 * console, printed when a server starts on a database with no account and no demo. Only its hash is
 * stored, in the database, so it works at every API process of that database: once (the first account
 * made with it deletes every token), while no account exists, for SETUP_TOKEN_LIFETIME_MS. Tokens
 * printed earlier, by this process or others, keep working alongside it.
 */
export async function issueSetupToken(db: Db, now = new Date()): Promise<string> {
  const token = SETUP_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  await insertFirstRunToken(db, hashApiKey(token), new Date(now.getTime() + SETUP_TOKEN_LIFETIME_MS));
  return token;
}
