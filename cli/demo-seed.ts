import { issueApiKey } from '../api/auth/api-key-token.ts';
import { formatLocal } from '../domain/time/zoned-time.ts';
import { createAccount } from '../db/accounts.ts';
import { insertApiKey } from '../db/api-keys.ts';
import { inTransaction, type Db } from '../db/database.ts';
import { recordDeviceFix } from '../db/device-states.ts';
import { addDevice } from '../db/devices.ts';
import { insertGeofence } from '../db/geofences.ts';
import { createTravel } from '../db/travels.ts';
import { createUser, findUser } from '../db/users.ts';
import { DomainError } from '../domain/domain-error.ts';

export const DEMO_EMAIL = 'demo@fleetcore.local';
export const DEMO_TIMEZONE = 'America/Mexico_City';

export interface DemoSeed {
  accountId: number;
  userId: number;
  apiKey: string;
  devices: string[];
  geofences: string[];
  travelId: number;
}

const square = (lat: number, lng: number, halfDeg: number) => ({
  type: 'Polygon' as const,
  coordinates: [[
    [lng - halfDeg, lat - halfDeg], [lng + halfDeg, lat - halfDeg], [lng + halfDeg, lat + halfDeg], [lng - halfDeg, lat + halfDeg], [lng - halfDeg, lat - halfDeg],
  ]],
});

/**
 * A small fleet in Mexico City for trying the API: an account, a user, a live key, four live vehicles
 * and one test vehicle, four geofences and one scheduled travel. Returns the key, shown only now.
 */
export async function seedDemo(db: Db, now = new Date()): Promise<DemoSeed> {
  const issued = issueApiKey('live');
  return inTransaction(db, async (trx) => {
    const existing = await findUser(trx, DEMO_EMAIL);
    if (existing) {
      throw new DomainError('conflict', `demo data already exists (account ${existing.account_id}); for another key run: fleet key create --user ${DEMO_EMAIL}`);
    }
    const account = await createAccount(trx, 'Demo Fleet');
    const user = await createUser(trx, { accountId: account.id, email: DEMO_EMAIL, name: 'Demo Dispatcher', timezone: DEMO_TIMEZONE });
    await insertApiKey(trx, { userId: user.id, name: 'demo', prefix: issued.prefix, keyHash: issued.hash, mode: 'live', permissions: ['*', 'commands:write'] });

    const geofences = [
      { name: 'Central de Abasto', shape: { kind: 'polygon' as const, geometry: square(19.3727, -99.0926, 0.004) } },
      { name: 'Airport Cargo', shape: { kind: 'circle' as const, lat: 19.44, lng: -99.07, radiusMeters: 500 } },
      { name: 'Polanco Customer', shape: { kind: 'circle' as const, lat: 19.433, lng: -99.195, radiusMeters: 250 } },
      { name: 'Vallejo Depot', shape: { kind: 'polygon' as const, geometry: square(19.488, -99.153, 0.003) } },
    ];
    // Live, as the demo key: a test key sees only the geofences made with it.
    for (const g of geofences) await insertGeofence(trx, { accountId: account.id, mode: 'live', ...g });

    const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000);
    const vehicles = [
      { imei: '356307042441013', name: 'Truck 01', plates: 'NLE-4821', mode: 'live' as const,
        fix: { lat: 19.3801, lng: -99.1012, speed: 42, heading: 315, ignition: true, at: minutesAgo(1) } },
      { imei: '356307042441021', name: 'Truck 02', plates: 'MEX-1175', mode: 'live' as const,
        fix: { lat: 19.4879, lng: -99.1531, speed: 0, heading: 90, ignition: true, at: minutesAgo(3) } },
      { imei: '356307042441039', name: 'Van 03', plates: 'CDMX-3390', mode: 'live' as const,
        fix: { lat: 19.4331, lng: -99.1948, speed: 0, heading: 0, ignition: false, at: minutesAgo(12) } },
      { imei: '356307042441047', name: 'Van 04', plates: 'CDMX-7702', mode: 'live' as const, fix: undefined },
      { imei: '356307042449990', name: 'Test Truck', plates: 'TEST-0001', mode: 'test' as const,
        fix: { lat: 19.4326, lng: -99.1332, speed: 25, heading: 180, ignition: true, at: minutesAgo(2) } },
    ];
    for (const v of vehicles) {
      const { device } = await addDevice(trx, { accountId: account.id, imei: v.imei, name: v.name, plates: v.plates, mode: v.mode, protocol: 'teltonika' });
      if (!v.fix) continue;
      await recordDeviceFix(
        trx,
        {
          deviceId: device.id, fixTime: v.fix.at, valid: true, latitude: v.fix.lat, longitude: v.fix.lng,
          speedKmh: v.fix.speed, heading: v.fix.heading, ignition: v.fix.ignition, satellites: 11,
          odometerKm: 48_213.4, powerVoltage: v.fix.ignition ? 13.8 : 12.4, backupVoltage: 4.1, signalStrength: 24, connectionType: '4G',
        },
        v.fix.at,
      );
    }

    const start = new Date(Math.ceil((now.getTime() + 30 * 60_000) / 60_000) * 60_000);
    const travel = await createTravel(trx, { accountId: account.id, userId: user.id, mode: 'live' }, {
      vehicleName: 'Truck 01',
      startTime: start,
      waypoints: [
        { geofenceName: 'Airport Cargo', expectedArrival: new Date(start.getTime() + 50 * 60_000) },
        { geofenceName: 'Polanco Customer', expectedArrival: new Date(start.getTime() + 110 * 60_000) },
      ],
    });
    return {
      accountId: account.id,
      userId: user.id,
      apiKey: issued.key,
      devices: vehicles.map((v) => v.name),
      geofences: geofences.map((g) => g.name),
      travelId: travel.travel.id,
    };
  });
}

/** What a new user reads after seeding: the key and a first call to each endpoint. */
export function demoInstructions(seed: DemoSeed, baseUrl: string, now = new Date()): string[] {
  const auth = `-H "Authorization: Bearer ${seed.apiKey}"`;
  const today = formatLocal(now, DEMO_TIMEZONE).slice(0, 10).split('/').reverse().join('-');
  const start = formatLocal(new Date(now.getTime() + 3 * 3_600_000), DEMO_TIMEZONE);
  const arrive = formatLocal(new Date(now.getTime() + 4 * 3_600_000), DEMO_TIMEZONE);
  return [
    `Demo data created: account ${seed.accountId}, user ${DEMO_EMAIL} (${DEMO_TIMEZONE}), ${seed.devices.length} vehicles, ${seed.geofences.length} geofences, travel ${seed.travelId}.`,
    '',
    `Demo API key (live; shown only once): ${seed.apiKey}`,
    '',
    'Try:',
    `  curl -s ${auth} ${baseUrl}/api/v1/devices/status`,
    `  curl -s ${auth} ${baseUrl}/api/v1/devices/356307042441013/status`,
    `  curl -s ${auth} ${baseUrl}/api/v1/geofences`,
    `  curl -s ${auth} "${baseUrl}/api/v1/reports/geofences?from=${today}&to=${today}"`,
    `  curl -s ${auth} ${baseUrl}/api/v1/travels`,
    `  curl -s ${auth} ${baseUrl}/api/v1/travels/${seed.travelId}`,
    `  curl -s ${auth} -H "Content-Type: application/json" -d '{"vehicle":"Truck 02","startTime":"${start}","waypoints":[{"geofence":"Polanco Customer","expectedArrival":"${arrive}"}]}' ${baseUrl}/api/v1/travels`,
    `  curl -s ${auth} -X DELETE ${baseUrl}/api/v1/travels/${seed.travelId}`,
    '',
    'Cut a demo truck\'s engine and watch it stop (its simulated tracker answers; force: it may be moving):',
    `  curl -s ${auth} -H "Content-Type: application/json" -d '{"deviceId":"356307042441013","type":"engine_stop","params":{"force":true}}' ${baseUrl}/api/v1/commands`,
    `  curl -s ${auth} ${baseUrl}/api/v1/devices/356307042441013/status`,
    `  curl -s ${auth} -H "Content-Type: application/json" -d '{"deviceId":"356307042441013","type":"engine_resume"}' ${baseUrl}/api/v1/commands`,
    '',
    `Live map (log in with the key above): ${baseUrl}/map`,
    `API reference: ${baseUrl}/docs`,
  ];
}
