import { describe, expect, it } from 'vitest';
import { newSession } from '../ingest/protocol.ts';
import { gt06 } from '../ingest/protocols/gt06/gt06.ts';
import { gt06BatteryHeartbeat, gt06Location, gt06Login, gt06NetworkTechnology, readGt06Answer } from './gt06-packets.ts';
import { cutFrame } from '../ingest/frame-cutter.ts';

describe('simulated GT06 packets', () => {
  it('log in and decode back to what was simulated, each answered with its type and serial', () => {
    const session = newSession();
    const login = gt06.decode(gt06Login('356307042441013', 7), session);
    expect(login.deviceId).toBe('356307042441013');
    expect(readGt06Answer(login.reply!)).toEqual({ consumed: 10, type: 0x01 });

    const time = new Date('2024-05-01T14:30:00Z');
    const frame = gt06Location({ time, latitude: 19.4326, longitude: -99.1332, speedKmh: 42, heading: 271, satellites: 9, ignition: true }, 8);
    expect(cutFrame(gt06, frame)).toMatchObject({ kind: 'frame', consumed: frame.length });
    const decoded = gt06.decode(frame, session);
    expect(decoded.positions).toHaveLength(1);
    const p = decoded.positions[0]!;
    expect(p).toMatchObject({ fixTime: time, valid: true, speedKmh: 42, heading: 271, satellites: 9, attributes: { ignition: true } });
    expect(p.latitude).toBeCloseTo(19.4326, 5);
    expect(p.longitude).toBeCloseTo(-99.1332, 5);
    expect(Buffer.from(decoded.reply!).subarray(3, 6).toString('hex')).toBe('220008');
  });

  it('report the network technology (0x94) and a heartbeat with battery volts and signal (0x23)', () => {
    const session = newSession();
    gt06.decode(gt06Login('356307042441013', 1), session);
    const network = gt06NetworkTechnology('4G', 2);
    expect(cutFrame(gt06, network)).toMatchObject({ kind: 'frame', consumed: network.length });
    const info = gt06.decode(network, session);
    expect(info.reports![0]).toMatchObject({ connectionType: '4G' });
    expect(readGt06Answer(info.reply!)).toMatchObject({ type: 0x94 });
    const heartbeat = gt06.decode(gt06BatteryHeartbeat({ ignition: true, battery: 4.05, gsm: 3 }, 3), session);
    expect(heartbeat.reports![0]).toMatchObject({ signalStrength: 23, attributes: { ignition: true, battery: 4.05, rssi: 3 } });
    expect(readGt06Answer(heartbeat.reply!)).toMatchObject({ type: 0x23 });
  });
});
