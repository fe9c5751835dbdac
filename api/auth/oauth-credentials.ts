import { randomBytes } from 'node:crypto';
import { hashApiKey, randomBase62 } from './api-key-token.ts';

/** An OAuth client's credentials: the id is public, the secret is shown once and kept as a hash. */
export interface IssuedClient {
  clientId: string;
  secret: string;
  secretHash: string;
}

export const ACCESS_TOKEN_PREFIX = 'fc_at_';

export function issueClientCredentials(): IssuedClient {
  const secret = `fcs_${randomBase62(40)}`;
  return { clientId: `fcc_${randomBase62(20)}`, secret, secretHash: hashApiKey(secret) };
}

/** An opaque access token (256 random bits) and the hash it is stored and looked up by. */
export function issueAccessToken(): { token: string; hash: string } {
  const token = `${ACCESS_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashApiKey(token) };
}
