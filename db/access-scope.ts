import type { DeviceMode } from './schema.ts';

/** What one API key may see: its user's devices, of the key's mode, within the user's account. */
export interface AccessScope {
  accountId: number;
  userId: number;
  mode: DeviceMode;
}
