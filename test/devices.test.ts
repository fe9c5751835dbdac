import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

describe('GET /api/v1/devices/status', () => {
  it('lists the visible devices by name with every status field', async () => {
    const { account, user, key } = await t.fixtures.tenant();
    const truck = await t.fixtures.device(account.id, { name: 'B Truck', plates: 'ABC-123', imei: '356307042441013' });
    await t.fixtures.device(account.id, { name: 'A Van', plates: 'VAN-1' });
    const fixAt = minutesAgo(2);
    await t.fixtures.fix(
      truck.id,
      {
        fixTime: fixAt, valid: true, latitude: 19.4326, longitude: -99.1332, speedKmh: 42.6, heading: 271.4, satellites: 9, ignition: true,
        odometerKm: 1234.56, powerVoltage: 12.625, backupVoltage: 4.1, signalStrength: 22, connectionType: '4G',
      },
      fixAt,
    );

    const { status, body } = await t.json('/api/v1/devices/status', { key });
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.error).toBeNull();
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
    expect(body.data.map((d: { name: string }) => d.name)).toEqual(['A Van', 'B Truck']);
    expect(body.data[1]).toEqual({
      deviceId: '356307042441013',
      name: 'B Truck',
      plates: 'ABC-123',
      status: 'Moving',
      engineStatus: 'On',
      latitude: 19.4326,
      longitude: -99.1332,
      address: null,
      speedKmh: 43,
      heading: 271,
      odometerKm: 1234.6,
      satellites: 9,
      powerVoltage: '12.63 V',
      backupVoltage: '4.10 V',
      signalStrength: 22,
      connectionType: '4G',
      lastReportUtc: fixAt.toISOString(),
      minutesSinceReport: 2,
    });
    // Never reported: position unknown, Inactive.
    expect(body.data[0]).toMatchObject({ status: 'Inactive', engineStatus: 'Off', latitude: null, lastReportUtc: null, minutesSinceReport: null });
    expect(user.id).toBeGreaterThan(0);
  });

  it('classifies Moving, Stopped, Off and Inactive from speed, ignition and report age', async () => {
    const { account, key } = await t.fixtures.tenant();
    const cases = [
      { name: 'moving', speedKmh: 5, ignition: true, at: minutesAgo(1), expected: 'Moving' },
      { name: 'stopped', speedKmh: 4.9, ignition: true, at: minutesAgo(1), expected: 'Stopped' },
      { name: 'off', speedKmh: 0, ignition: false, at: minutesAgo(29), expected: 'Off' },
      { name: 'inactive', speedKmh: 60, ignition: true, at: minutesAgo(31), expected: 'Inactive' },
    ];
    for (const c of cases) {
      const device = await t.fixtures.device(account.id, { name: c.name });
      await t.fixtures.fix(device.id, { fixTime: c.at, valid: true, latitude: 1, longitude: 1, speedKmh: c.speedKmh, ignition: c.ignition }, c.at);
    }
    const { body } = await t.json('/api/v1/devices/status', { key });
    const byName = Object.fromEntries(body.data.map((d: { name: string; status: string }) => [d.name, d.status]));
    expect(byName).toEqual(Object.fromEntries(cases.map((c) => [c.name, c.expected])));
  });

  it('keeps the newest fix when an older one arrives later, but counts it as a report', async () => {
    const { account, key } = await t.fixtures.tenant();
    const device = await t.fixtures.device(account.id);
    await t.fixtures.fix(device.id, { fixTime: minutesAgo(5), valid: true, latitude: 10, longitude: 20 }, minutesAgo(5));
    const late = new Date();
    await t.fixtures.fix(device.id, { fixTime: minutesAgo(60), valid: true, latitude: 11, longitude: 21 }, late);
    const { body } = await t.json(`/api/v1/devices/${device.imei}/status`, { key });
    expect(body.data).toMatchObject({ latitude: 10, longitude: 20, lastReportUtc: late.toISOString(), minutesSinceReport: 0 });
  });

  it('shows a user only the devices granted to them, and a key only devices of its mode', async () => {
    const account = await t.fixtures.account();
    const alice = await t.fixtures.user(account.id);
    const bob = await t.fixtures.user(account.id);
    await t.fixtures.device(account.id, { name: 'alice live', userIds: [alice.id] });
    await t.fixtures.device(account.id, { name: 'alice test', userIds: [alice.id], mode: 'test' });
    await t.fixtures.device(account.id, { name: 'bob live', userIds: [bob.id] });
    const aliceLive = (await t.fixtures.key(alice.id)).key;
    const aliceTest = (await t.fixtures.key(alice.id, { mode: 'test' })).key;
    const bobLive = (await t.fixtures.key(bob.id)).key;
    const names = async (key: string) => (await t.json('/api/v1/devices/status', { key })).body.data.map((d: { name: string }) => d.name);
    expect(await names(aliceLive)).toEqual(['alice live']);
    expect(await names(aliceTest)).toEqual(['alice test']);
    expect(await names(bobLive)).toEqual(['bob live']);
  });
});

describe('GET /api/v1/devices/{deviceId}/status', () => {
  it('returns one device by IMEI', async () => {
    const { account, key } = await t.fixtures.tenant();
    const device = await t.fixtures.device(account.id, { name: 'Solo', plates: 'S-1' });
    const { status, body } = await t.json(`/api/v1/devices/${device.imei}/status`, { key });
    expect(status).toBe(200);
    expect(body.data).toMatchObject({ deviceId: device.imei, name: 'Solo', plates: 'S-1', status: 'Inactive' });
  });

  it('answers 404 "Device not found or no access" for unknown, other-user, other-account and other-mode devices', async () => {
    const account = await t.fixtures.account();
    const owner = await t.fixtures.user(account.id);
    const other = await t.fixtures.user(account.id);
    const device = await t.fixtures.device(account.id, { userIds: [owner.id] });
    const testDevice = await t.fixtures.device(account.id, { userIds: [owner.id], mode: 'test' });
    const foreign = await t.fixtures.tenant();
    const otherKey = (await t.fixtures.key(other.id)).key;
    const ownerLive = (await t.fixtures.key(owner.id)).key;
    for (const [key, imei] of [
      [ownerLive, '999999999999999'],
      [otherKey, device.imei],
      [foreign.key, device.imei],
      [ownerLive, testDevice.imei],
    ] as const) {
      const { status, body } = await t.json(`/api/v1/devices/${imei}/status`, { key });
      expect(status).toBe(404);
      expect(body).toMatchObject({ success: false, data: null, error: 'Device not found or no access' });
    }
    expect((await t.json(`/api/v1/devices/${device.imei}/status`, { key: ownerLive })).status).toBe(200);
  });
});

describe('GET /api/v1/devices/{deviceId}/status: heading', () => {
  it.each([
    [360, 0],
    [359.6, 0],
    [359.4, 359],
    [0, 0],
    [-90, 270],
    [720.2, 0],
  ])('a stored heading of %s reads %s (degrees 0 to 359)', async (stored, shown) => {
    const { account, key } = await t.fixtures.tenant();
    const device = await t.fixtures.device(account.id);
    await t.fixtures.fix(device.id, { fixTime: minutesAgo(1), valid: true, latitude: 19.4, longitude: -99.1, heading: stored });
    const { body } = await t.json(`/api/v1/devices/${device.imei}/status`, { key });
    expect(body.data.heading).toBe(shown);
  });
});
