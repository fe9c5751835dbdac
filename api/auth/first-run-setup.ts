import { randomBytes, timingSafeEqual } from 'node:crypto';
import { hashApiKey } from './api-key-token.ts';

export const SETUP_TOKEN_PREFIX = 'fst_';

/**
 * The one-time token that lets the first person create the first account and its owner from the
 * console, when a server starts on a database with no account and no demo. It lives in this process
 * only (printed once at start, never stored): it works at the process that printed it, once, and
 * only while no account exists. A restart prints another while there is still none.
 */
export class FirstRunSetup {
  private hash: Buffer | undefined;

  /** A new token (the previous one stops working). */
  issue(): string {
    const token = SETUP_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    this.hash = Buffer.from(hashApiKey(token));
    return token;
  }

  /** Whether a setup is open at all. */
  get open(): boolean {
    return this.hash !== undefined;
  }

  /** Whether `token` is the one issued (compared in constant time). */
  matches(token: string): boolean {
    if (!this.hash) return false;
    const given = Buffer.from(hashApiKey(token));
    return given.length === this.hash.length && timingSafeEqual(given, this.hash);
  }

  /** Used, or made pointless by an account created some other way: no token works any more. */
  close(): void {
    this.hash = undefined;
  }
}
