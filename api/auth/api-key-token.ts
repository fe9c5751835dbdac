import { createHash, randomBytes } from 'node:crypto';
import type { DeviceMode } from '../../db/schema.ts';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 32; // 32 base62 characters ≈ 190 bits
const PREFIX_SECRET_CHARS = 6;
const KEY_SHAPE = /^fc_(?:live|test)_[0-9A-Za-z]{32}$/;

export interface IssuedKey {
  /** The whole key: shown once, never stored. */
  key: string;
  /** Mode and the first secret characters: stored in clear to tell keys apart. */
  prefix: string;
  hash: string;
}

/**
 * Keys, secrets and tokens are random, so a fast hash is enough to make a stolen table useless; a
 * slow KDF would only slow every request down.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** `length` characters of [0-9A-Za-z], each equally likely (rejection sampling). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

export function issueApiKey(mode: DeviceMode): IssuedKey {
  const key = `fc_${mode}_${randomBase62(SECRET_LENGTH)}`;
  return { key, prefix: apiKeyPrefix(key)!, hash: hashApiKey(key) };
}

/** The clear prefix an API key is looked up by, or undefined for a string no key can be. */
export function apiKeyPrefix(key: string): string | undefined {
  if (!KEY_SHAPE.test(key)) return undefined;
  return key.slice(0, 'fc_live_'.length + PREFIX_SECRET_CHARS);
}
