import { hash, verify } from '@node-rs/argon2';

/**
 * Passwords are kept as argon2id hashes (PHC strings, `$argon2id$v=19$m=19456,t=2,p=1$...`): the
 * library's defaults, OWASP's minimum for argon2id (19 MiB, 2 passes), about 50 ms on one core.
 */
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

let dummy: Promise<string> | undefined;

/**
 * Whether `password` is the one hashed. With no hash (an unknown email, a user without a password) a
 * dummy hash is checked all the same, so the answer takes as long and says nothing about the email.
 */
export async function passwordMatches(stored: string | null | undefined, password: string): Promise<boolean> {
  if (!stored) {
    dummy ??= hash('fleetcore-dummy-password');
    await verify(await dummy, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
