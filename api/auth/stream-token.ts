import { randomBytes } from 'node:crypto';
import { hashApiKey } from './api-key-token.ts';

/**
 * How long a stream token waits for its one use (it opens one stream, once); the stream it opened stays
 * open after that, within the stream's own bounds (maximum life, its credential revoked or expired).
 */
export const STREAM_TOKEN_TTL_MS = 60_000;

export const STREAM_TOKEN_PREFIX = 'fst_';

/** A random token for `?token=`, and the hash stored for it (the same fast hash as keys: it is random too). */
export function issueStreamToken(): { token: string; hash: string } {
  const token = STREAM_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { token, hash: hashApiKey(token) };
}
