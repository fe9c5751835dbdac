import { createHash, randomBytes } from 'node:crypto';
import type { DeviceMode } from '../../db/schema.ts';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 32; // 32 base62 characters ≈ 190 bits
const PREFIX_SECRET_CHARS = 6;

export interface IssuedKey {
  /** The whole key: shown once, never stored. */
  key: string;
  /** Mode and the first secret characters: stored in clear to tell keys apart. */
  prefix: string;
  hash: string;
}

/**
 * Keys are random, so a fast hash is enough to make a stolen table useless; a slow KDF would only
 * slow every request down.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function issueApiKey(mode: DeviceMode): IssuedKey {
  const bytes = randomBytes(SECRET_LENGTH * 2);
  let secret = '';
  // Rejection sampling keeps every character equally likely.
  for (let i = 0; i < bytes.length && secret.length < SECRET_LENGTH; i++) {
    const b = bytes[i]!;
    if (b < 248) secret += ALPHABET[b % 62];
  }
  while (secret.length < SECRET_LENGTH) secret += ALPHABET[randomBytes(1)[0]! % 62];
  const key = `fc_${mode}_${secret}`;
  return { key, prefix: key.slice(0, `fc_${mode}_`.length + PREFIX_SECRET_CHARS), hash: hashApiKey(key) };
}
