import { StartupError } from '../runtime/startup-error.ts';

/** The environment as configuration reads it. */
export type Env = Record<string, string | undefined>;

/** An integer variable within [min, max], or the default when unset or empty; anything else stops the start. */
export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new StartupError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** `true` or `false`, or the default when unset or empty. */
export function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (!raw) return fallback;
  if (raw !== 'true' && raw !== 'false') throw new StartupError(`${name} must be true or false, got "${raw}"`);
  return raw === 'true';
}
