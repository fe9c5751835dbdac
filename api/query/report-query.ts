import { visibleDevicesByImei } from '../../db/devices.ts';
import type { AccessScope } from '../../db/access-scope.ts';
import type { Db } from '../../db/database.ts';
import { ApiError } from '../api-error.ts';
import { commaList } from './comma-list.ts';

/** A report's `include`: a comma-separated subset of its sections (default all), in the sections' order. */
export function includedSections<S extends string>(raw: string | undefined, all: readonly S[]): S[] {
  const requested = commaList(raw, 'include') ?? [...all];
  for (const name of requested) {
    if (!(all as readonly string[]).includes(name)) {
      throw new ApiError(400, `Unknown include section "${name}"; use ${all.slice(0, -1).join(', ')} or ${all[all.length - 1]}`);
    }
  }
  return all.filter((s) => requested.includes(s));
}

/** A report's `deviceIds` (comma-separated IMEIs) as visible devices by name; omitted, every visible one. One not visible is 404. */
export async function reportDevices(db: Db, scope: AccessScope, raw: string | undefined) {
  const imeis = commaList(raw, 'deviceIds');
  const devices = await visibleDevicesByImei(db, scope, imeis);
  const missing = imeis?.find((imei) => !devices.some((d) => d.imei === imei));
  if (missing !== undefined) throw new ApiError(404, `Device not found or no access: ${missing}`);
  return devices;
}
