import { randomBytes } from 'node:crypto';
import { hashApiKey } from './api-key-token.ts';
import { insertSignInToken } from '../../db/user-passwords.ts';
import type { Db } from '../../db/database.ts';

/** How long a one-time link to set a password works. */
export const SIGN_IN_LINK_TTL_MS = 24 * 3_600_000;

/**
 * A one-time link that lets the user set a password (the map's page /map/set-password), valid for
 * 24 hours. The token rides in the URL's fragment, which browsers never send to a server or in a Referer.
 */
export async function issueSignInLink(db: Db, userId: number, publicUrl: string): Promise<{ url: string; expiresAt: Date }> {
  const token = 'fsi_' + randomBytes(32).toString('base64url');
  const expiresAt = new Date(Date.now() + SIGN_IN_LINK_TTL_MS);
  await insertSignInToken(db, hashApiKey(token), userId, expiresAt);
  return { url: `${publicUrl.replace(/\/+$/, '')}/map/set-password#token=${token}`, expiresAt };
}
