import { describe, expect, it } from 'vitest';
import { ByteReader } from '../../codec/byte-reader.ts';
import { readLocation } from './jt808-location.ts';

/**
 * The 28-byte basic location: no alarm, status ACC on and positioned, 22.5° N 114° E, 12 m, 30 km/h,
 * heading 90, 2026-11-29 18:00:00 Beijing time (10:00 UTC).
 */
const BASIC = '00000000' + '00000003' + '015752a0' + '06cb8080' + '000c' + '012c' + '005a' + '261129180000';

const read = (hex: string) => readLocation(new ByteReader(Uint8Array.from(Buffer.from(hex, 'hex'))));

describe('jt808 location additional information', () => {
  it('reads standard items that happen to add up to 20 bytes as items, not as the vendor trailer', () => {
    // 0x01 mileage 5,000.0 km, 0x02 fuel 50.0 L, 0x03 speed 30.0 km/h, 0x30 CSQ 23, 0x31 9 satellites: 6 + 4 + 4 + 3 + 3 bytes.
    const p = read(BASIC + '01040000c350' + '020201f4' + '0302012c' + '300117' + '310109');
    expect(p.fixTime.toISOString()).toBe('2026-11-29T10:00:00.000Z');
    expect(p).toMatchObject({ latitude: 22.5, longitude: 114, speedKmh: 30, satellites: 9, signalStrength: 23 });
    expect(p.attributes).toMatchObject({ odometer: 5_000_000, fuel: 50, obdSpeed: 30, rssi: 23, sat: 9 });
    expect(p.attributes.battery).toBeUndefined();
  });

  it('still reads the fixed 20-byte trailer of the trackers that send one instead of items', () => {
    // Remaining battery and mileage (skipped), mileage 1,234 km, 12.6 V, area (skipped), signal 18, then 5 bytes the decoder leaves.
    const p = read(BASIC + '5a000000' + '000004d2' + '007e' + '00000000' + '12' + '0000000000');
    expect(p.attributes).toMatchObject({ odometer: 1_234_000, battery: 12.6, rssi: 18 });
    expect(p.satellites).toBeUndefined();
  });
});
