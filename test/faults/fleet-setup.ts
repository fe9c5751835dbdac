import { issueApiKey } from '../../api/auth/api-key-token.ts';
import { createAccount } from '../../db/accounts.ts';
import { insertApiKey } from '../../db/api-keys.ts';
import type { Db } from '../../db/database.ts';
import { addDevice } from '../../db/devices.ts';
import { insertGeofence } from '../../db/geofences.ts';
import { createTravel } from '../../db/travels.ts';
import { createUser } from '../../db/users.ts';
import { farPlace, type SeededFleet } from './seeded-fleet.ts';

export interface FleetTenant {
  accountId: number;
  userId: number;
  key: string;
}

/**
 * What an operator sets up before the trackers drive: an account with a speed limit, a user in UTC
 * (the API's local times are then the fix times), a key, the vehicles and the geofences, through
 * the functions the CLI uses.
 */
export async function seedFleet(db: Db, fleet: SeededFleet): Promise<FleetTenant> {
  const account = await createAccount(db, `Faults ${fleet.seed}`, { speedLimitKmh: fleet.speedLimitKmh });
  const user = await createUser(db, { accountId: account.id, email: `faults-${fleet.seed}@example.test`, timezone: 'UTC' });
  const issued = issueApiKey('live');
  await insertApiKey(db, { userId: user.id, prefix: issued.prefix, keyHash: issued.hash, mode: 'live', permissions: ['*'], expiresAt: null });
  for (const v of [...fleet.vehicles, fleet.parked]) {
    await addDevice(db, { accountId: account.id, imei: v.imei, name: v.name, plates: `F-${v.imei.slice(-4)}`, mode: 'live', protocol: v.protocol });
  }
  for (const p of fleet.places) {
    await insertGeofence(db, { accountId: account.id, name: p.name, shape: p.shape, enterDwellSeconds: p.dwellS, exitDwellSeconds: p.dwellS });
  }
  return { accountId: account.id, userId: user.id, key: issued.key };
}

/**
 * A travel for the parked van that starts at `startTime` (wall clock, after the fault) towards a
 * place it never reaches: only the engine's schedules can start it (its vehicle sends nothing to
 * evaluate) and keep its ETA fresh. Written in the database, as the API's minute resolution is too
 * coarse for a start a few seconds ahead.
 */
export async function scheduleParkedTravel(db: Db, fleet: SeededFleet, tenant: FleetTenant, startTime: Date): Promise<number> {
  const record = await createTravel(db, { accountId: tenant.accountId, userId: tenant.userId, mode: 'live' }, {
    vehicleName: fleet.parked.name, startTime, waypoints: [{ geofenceName: farPlace(fleet).name, expectedArrival: new Date(startTime.getTime() + 3_600_000) }],
  });
  return record.travel.id;
}

/** `dd/MM/yyyy HH:mm` in UTC, the API's local time for a user in UTC. */
function apiTime(at: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(at.getUTCDate())}/${p(at.getUTCMonth() + 1)}/${at.getUTCFullYear()} ${p(at.getUTCHours())}:${p(at.getUTCMinutes())}`;
}

export async function callApi(baseUrl: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${baseUrl}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/** A webhook for every event kind, through the API; returns its signing secret. */
export async function registerWebhook(baseUrl: string, key: string, url: string): Promise<string> {
  const created = await callApi(baseUrl, key, 'POST', '/webhooks', { url, events: ['*'], description: 'fault suite receiver' });
  if (created.status !== 201) throw new Error(`POST /webhooks answered ${created.status}: ${JSON.stringify(created.body)}`);
  return created.body.data.secret as string;
}

/** The travels of the seeded fleet through the API, starting at the epoch (long past: they start at once). */
export async function createTravels(baseUrl: string, key: string, fleet: SeededFleet): Promise<void> {
  for (const v of fleet.vehicles) {
    if (v.travel.length === 0) continue;
    const created = await callApi(baseUrl, key, 'POST', '/travels', {
      vehicle: v.name, startTime: apiTime(fleet.epoch), waypoints: v.travel.map((w) => ({ geofence: w.geofence, expectedArrival: apiTime(w.expectedArrival) })),
    });
    if (created.status !== 200) throw new Error(`POST /travels for ${v.name} answered ${created.status}: ${JSON.stringify(created.body)}`);
  }
}
