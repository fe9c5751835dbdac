import type { DeviceMode } from '../db/schema.ts';
import { UsageError } from './usage-error.ts';

/** `--mode`: live (the default) or test. */
export function parseMode(raw: string | undefined): DeviceMode {
  const mode = raw ?? 'live';
  if (mode !== 'live' && mode !== 'test') throw new UsageError(`--mode must be live or test, got "${mode}"`);
  return mode;
}
