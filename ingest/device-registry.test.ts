import { describe, expect, it } from 'vitest';
import { silentLogger } from '../runtime/logger.ts';
import { DeviceRegistry, type RegisteredDevice } from './device-registry.ts';
import { IngestCounters } from './ingest-counters.ts';
import { ThrottledNotice } from './throttled-notice.ts';

/** A table of registered devices that counts how often each IMEI was looked up in it. */
function devicesTable(imeis: string[]) {
  const rows = new Map(imeis.map((imei, i) => [imei, { id: i + 1, imei }]));
  const lookups = new Map<string, number>();
  return {
    lookups: (imei: string) => lookups.get(imei) ?? 0,
    async find(imei: string): Promise<RegisteredDevice | undefined> {
      lookups.set(imei, (lookups.get(imei) ?? 0) + 1);
      return rows.get(imei);
    },
  };
}

const registry = (table: ReturnType<typeof devicesTable>, bounds?: ConstructorParameters<typeof DeviceRegistry>[3]) =>
  new DeviceRegistry((imei) => table.find(imei), new IngestCounters(), new ThrottledNotice(silentLogger), bounds);

describe('DeviceRegistry', () => {
  it('keeps known devices cached through a flood of unknown IMEIs larger than any bound', async () => {
    const known = ['356307042441013', '356307042441014'];
    const table = devicesTable(known);
    const devices = registry(table);
    for (const imei of known) expect(await devices.find(imei)).toMatchObject({ imei });
    let found = 0;
    for (let i = 0; i < 250_000; i++) if (await devices.find(`9${String(i).padStart(14, '0')}`)) found++;
    expect(found).toBe(0);
    for (const imei of known) expect(await devices.find(imei)).toMatchObject({ imei });
    // Answered from the cache: the flood did not cost the real trackers a lookup each.
    expect(known.map((imei) => table.lookups(imei))).toEqual([1, 1]);
  });

  it('evicts the least recently used entry of each kind when at its bound', async () => {
    const table = devicesTable(['a', 'b', 'c', 'd']);
    const devices = registry(table, { knownDevices: 3, unknownIds: 2 });
    for (const imei of ['a', 'b', 'c', 'a', 'd']) await devices.find(imei);
    // 'b' was the least recently used known device when 'd' came; the others are still cached.
    for (const imei of ['a', 'c', 'd', 'b']) await devices.find(imei);
    expect(['a', 'b', 'c', 'd'].map(table.lookups)).toEqual([1, 2, 1, 1]);

    for (const imei of ['x', 'y', 'x', 'z']) await devices.find(imei);
    // Unknown IMEIs have a bound of their own: 'y' went, and no known device did.
    for (const imei of ['x', 'z', 'y', 'c', 'd', 'b']) await devices.find(imei);
    expect(['x', 'y', 'z'].map(table.lookups)).toEqual([1, 2, 1]);
    expect(['b', 'c', 'd'].map(table.lookups)).toEqual([2, 1, 1]);
  });
});
