import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFleetSimulation } from '../simulators/fleet-simulation.ts';
import { gt06Dialect, teltonikaDialect, type TrackerDialect } from '../simulators/tracker-dialect.ts';
import type { VirtualTracker } from '../simulators/virtual-tracker.ts';
import { eventually } from './support/eventually.ts';
import { startTestIngest, type TestIngest } from './support/ingest-server.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

/**
 * The radio and battery fields of GET /devices/status, filled by the simulated trackers the demo fleet
 * runs, over real TCP: each protocol's signal scale converted to the specification's 0–31, the network
 * technology the tracker reports, and its backup battery in volts.
 */
let t: TestApp;
const listeners: TestIngest[] = [];
const trackers: VirtualTracker[] = [];

beforeAll(async () => {
  t = await startTestApp();
}, 120_000);
afterAll(async () => {
  await Promise.all(trackers.map((tracker) => tracker.stop(2_000)));
  await Promise.all(listeners.map((listener) => listener.close()));
  await t?.close();
});

async function simulate(dialect: TrackerDialect, imei: string, seed: number): Promise<void> {
  const listener = await startTestIngest(t.database, { protocol: dialect.protocol });
  listeners.push(listener);
  trackers.push(...startFleetSimulation({
    imeis: [imei], dialect, server: { host: '127.0.0.1', port: listener.port }, intervalMs: 1_000, seed, stops: [], center: { latitude: 19.43, longitude: -99.13 },
  }));
}

describe('GET /devices/status for simulated trackers', () => {
  it.each([
    // Teltonika: IO 21 level 4 of 5, IO 237 network type 2, IO 67 battery 4,100 mV.
    ['teltonika', teltonikaDialect, '356307042441501', 25],
    // GT06: heartbeat GSM level 3 of 4 and battery 4.10 V, information 0x94/0x0B network 4G.
    ['gt06', gt06Dialect, '356307042441502', 23],
  ] as const)('a %s tracker shows its signal on 0–31, its network type and its backup voltage', async (_, dialect, imei, signal) => {
    const { account, user, key } = await t.fixtures.tenant();
    await t.fixtures.device(account.id, { name: `${dialect.protocol} tracker`, imei, userIds: [user.id] });
    await simulate(dialect, imei, signal);
    const status = await eventually(
      async () => (await t.json('/api/v1/devices/status', { key })).body.data.find((d: { deviceId: string }) => d.deviceId === imei),
      (device) => expect(device).toMatchObject({ latitude: expect.any(Number), signalStrength: signal, connectionType: '4G', backupVoltage: '4.10 V' }),
      20_000,
    );
    expect(status.signalStrength).toBeGreaterThanOrEqual(0);
    expect(status.signalStrength).toBeLessThanOrEqual(31);
    // A later fix that does not report the radio (a GT06 between heartbeats) leaves what is known.
    await new Promise((r) => setTimeout(r, 2_500));
    const later = (await t.json('/api/v1/devices/status', { key })).body.data.find((d: { deviceId: string }) => d.deviceId === imei);
    expect(Date.parse(later.lastReportUtc)).toBeGreaterThan(Date.parse(status.lastReportUtc));
    expect(later).toMatchObject({ signalStrength: signal, connectionType: '4G', backupVoltage: '4.10 V' });
  }, 60_000);
});
