import type { Db } from '../db/database.ts';
import { addDevice, registeredImeis } from '../db/devices.ts';
import { geofenceCenters } from '../db/geofences.ts';
import type { Point } from './drive.ts';

/** IMEIs a seed's simulation uses: 15 digits, `35`, the seed (4 digits), the vehicle number (9). */
export function simulatedImei(seed: number, index: number): string {
  return `35${String(seed % 10_000).padStart(4, '0')}${String(index + 1).padStart(9, '0')}`;
}

/** Registers the simulation's vehicles in the account, those not there yet; returns every IMEI. */
export async function ensureSimulatedDevices(db: Db, accountId: number, seed: number, count: number, protocol = 'teltonika'): Promise<string[]> {
  const imeis = Array.from({ length: count }, (_, i) => simulatedImei(seed, i));
  const existing = await registeredImeis(db, imeis);
  for (const [i, imei] of imeis.entries()) {
    if (existing.has(imei)) continue;
    await addDevice(db, { accountId, imei, name: `Sim ${seed}-${i + 1}`, plates: `SIM-${String(i + 1).padStart(4, '0')}`, mode: 'live', protocol });
  }
  return imeis;
}

/** The account's geofence centers: the places simulated vehicles drive between. */
export async function geofenceStops(db: Db, accountId: number): Promise<Point[]> {
  return geofenceCenters(db, accountId);
}
