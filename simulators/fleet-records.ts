import { issueApiKey } from '../api/auth/api-key-token.ts';
import { createAccount } from '../db/accounts.ts';
import { insertApiKey } from '../db/api-keys.ts';
import type { Db } from '../db/database.ts';
import { recordDeviceFix } from '../db/device-states.ts';
import type { DeviceFix } from '../domain/stored-rows.ts';
import { addDevice } from '../db/devices.ts';
import { insertGeofence, type GeofenceShape } from '../db/geofences.ts';
import type { DeviceMode } from '../db/schema.ts';
import { createUser } from '../db/users.ts';

let sequence = 0;
const unique = () => `${process.pid}${String(++sequence).padStart(5, '0')}`;

/**
 * The records a simulated fleet stands on (accounts, users, keys, vehicles, fixes, geofences), made
 * through the same functions the CLI uses: for tests and benchmarks alike.
 */
export function fixtures(db: Db) {
  return {
    async account(name = `Account ${unique()}`) {
      return createAccount(db, name);
    },
    async user(accountId: number, timezone = 'America/Mexico_City') {
      return createUser(db, { accountId, email: `user${unique()}@example.test`, timezone });
    },
    async key(userId: number, options: { mode?: DeviceMode; permissions?: string[]; expiresAt?: Date } = {}) {
      const mode = options.mode ?? 'live';
      const issued = issueApiKey(mode);
      const row = await insertApiKey(db, {
        userId,
        prefix: issued.prefix,
        keyHash: issued.hash,
        mode,
        permissions: options.permissions ?? ['*'],
        expiresAt: options.expiresAt ?? null,
      });
      return { ...row, key: issued.key };
    },
    async device(accountId: number, options: { name?: string; plates?: string; mode?: DeviceMode; userIds?: number[]; imei?: string; protocol?: string } = {}) {
      const id = unique();
      const { device } = await addDevice(db, {
        accountId,
        imei: options.imei ?? `86${id.padStart(13, '0')}`,
        name: options.name ?? `Vehicle ${id}`,
        plates: options.plates ?? `P-${id}`,
        mode: options.mode ?? 'live',
        userIds: options.userIds,
        protocol: options.protocol ?? null,
      });
      return device;
    },
    async fix(deviceId: number, fix: Omit<DeviceFix, 'deviceId'>, receivedAt?: Date) {
      await recordDeviceFix(db, { deviceId, ...fix }, receivedAt);
    },
    async geofence(accountId: number, name: string, shape: GeofenceShape, mode: DeviceMode = 'live') {
      return insertGeofence(db, { accountId, mode, name, shape });
    },
    /** A user of a new account with a live key: the common starting point. */
    async tenant(timezone = 'America/Mexico_City') {
      const account = await this.account();
      const user = await this.user(account.id, timezone);
      const key = await this.key(user.id);
      return { account, user, key: key.key };
    },
  };
}

export const square = (lat: number, lng: number, half: number) => ({
  kind: 'polygon' as const,
  geometry: {
    type: 'Polygon' as const,
    coordinates: [[[lng - half, lat - half], [lng + half, lat - half], [lng + half, lat + half], [lng - half, lat + half], [lng - half, lat - half]]],
  },
});
