import { describe, expect, it } from 'vitest';
import { newSession } from '../ingest/protocol.ts';
import { teltonika } from '../ingest/protocols/teltonika/teltonika.ts';
import { teltonikaCodec8, teltonikaLogin } from './teltonika-packets.ts';
import { cutFrame } from '../ingest/frame-cutter.ts';

describe('simulated Teltonika packets', () => {
  it('decode back to what was simulated', () => {
    const session = newSession();
    expect(teltonika.decode(teltonikaLogin('356307042441013'), session).reply).toEqual(Uint8Array.of(1));
    const time = new Date('2024-05-01T14:30:00Z');
    const packet = teltonikaCodec8([
      { time, latitude: 19.4326, longitude: -99.1332, altitude: 2240, speedKmh: 42, heading: 271, satellites: 9, ignition: true, power: 13.8, odometer: 48_213_400 },
      { time: new Date(time.getTime() + 10_000), latitude: -33.9, longitude: 151.2, speedKmh: 0, heading: 0, satellites: 0, ignition: false },
    ]);
    const cut = cutFrame(teltonika, packet);
    expect(cut).toMatchObject({ kind: 'frame', consumed: packet.length });
    const decoded = teltonika.decode(packet, session);
    expect(Buffer.from(decoded.reply!).toString('hex')).toBe('00000002');
    expect(decoded.positions[0]).toMatchObject({
      fixTime: time, valid: true, latitude: 19.4326, longitude: -99.1332, altitude: 2240, speedKmh: 42, heading: 271, satellites: 9,
      attributes: { ignition: true, motion: true, power: 13.8, odometer: 48_213_400 },
    });
    expect(decoded.positions[1]).toMatchObject({ valid: false, latitude: -33.9, longitude: 151.2, attributes: { ignition: false, motion: false } });
  });

  it('reports the radio and battery of an LTE model: 4 of 5 bars, 4G, the battery in volts', () => {
    const session = newSession();
    teltonika.decode(teltonikaLogin('356307042441013'), session);
    const packet = teltonikaCodec8([{ time: new Date('2024-05-01T14:30:00Z'), latitude: 19.4, longitude: -99.1, speedKmh: 0, heading: 0, satellites: 9, ignition: true, battery: 3.95 }]);
    const p = teltonika.decode(packet, session).positions[0]!;
    expect(p).toMatchObject({ signalStrength: 25, connectionType: '4G', attributes: { rssi: 4, networkType: 2, battery: 3.95 } });
  });

  it('carries an iButton key as IO 78, which decodes to the driver identifier', () => {
    const session = newSession();
    teltonika.decode(teltonikaLogin('356307042441013'), session);
    const time = new Date('2024-05-01T14:30:00Z');
    const packet = teltonikaCodec8([{ time, latitude: 19.4, longitude: -99.1, speedKmh: 0, heading: 0, satellites: 9, ignition: true, iButton: 0x01c68011010000c7n }]);
    const decoded = teltonika.decode(packet, session);
    expect(decoded.positions[0]!.attributes).toMatchObject({ driverUniqueId: '01C68011010000C7', ignition: true });
  });
});
