import { describe, expect, it } from 'vitest';
import { crc16X25 } from '../../codec/crc16.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession } from '../../protocol.ts';
import { gt06 } from './gt06.ts';
import { buildFrame } from './gt06-message.ts';

const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));
const LOGIN = hex('78780d01086471700328358100093f040d0a');
const GPS_LBS = hex('78781f120f0a140e150bc505e51e780293a9e800540000f601006e0055da00035f240d0a');

function loggedIn(): ReturnType<typeof newSession> {
  const session = newSession();
  gt06.decode(LOGIN, session);
  return session;
}

describe('gt06 decoder', () => {
  it('identifies the device from the login and answers with the exact acknowledgement', () => {
    const session = newSession();
    const result = gt06.decode(LOGIN, session);
    expect(result.deviceId).toBe('864717003283581');
    expect(session.deviceId).toBe('864717003283581');
    expect(result.positions).toEqual([]);
    // 78 78 05 01, the login's serial 0009, CRC-ITU over 05 01 00 09, CR LF.
    expect(Buffer.from(result.reply!).toString('hex')).toBe('78780501000955940d0a');
    expect(crc16X25(Uint8Array.of(0x05, 0x01, 0x00, 0x09))).toBe(0x5594);
  });

  it('gives no position and no answer for data sent before the login', () => {
    const result = gt06.decode(GPS_LBS, newSession());
    expect(result.positions).toEqual([]);
    expect(result.reply).toBeUndefined();
  });

  it('reads time, coordinates, speed, course and validity of an 0x12 GPS/LBS message', () => {
    const result = gt06.decode(GPS_LBS, loggedIn());
    expect(result.positions).toHaveLength(1);
    const p = result.positions[0]!;
    expect(p.fixTime.toISOString()).toBe('2015-10-20T14:21:11.000Z');
    expect(p.valid).toBe(true);
    expect(p.latitude).toBeCloseTo(54.94535, 5);
    expect(p.longitude).toBeCloseTo(24.01762, 5);
    expect(p.speedKmh).toBe(0);
    expect(p.satellites).toBe(5);
    expect(result.reply![3]).toBe(0x12);
  });

  it('maps the status block of an 0x16 alarm message (SOS, ignition, battery %)', () => {
    const frame = hex('787826161709130f3a2dcc02c55f2a089f9af9005c210901360481fe066d9b03413e420102035f92fe0d0a');
    const p = gt06.decode(frame, loggedIn()).positions[0]!;
    expect(p.attributes.alarm).toBe('sos');
    expect(p.attributes.batteryLevel).toBe(62);
  });

  it('reports a heartbeat (no fix) as a report, acknowledged', () => {
    const frame = hex('78780a13c40604000201298f5b0d0a');
    const result = gt06.decode(frame, loggedIn());
    expect(result.positions).toEqual([]);
    expect(result.reports).toHaveLength(1);
    expect(result.reports![0]!.attributes.batteryLevel).toBe(100);
    expect(result.reply![3]).toBe(0x13);
  });

  it('gives the GSM level (bars 0–4, kept as rssi) as signal strength on 0–31', () => {
    // 0x13 heartbeats with GSM level 4, 2 and 0, then a level off the scale.
    const levels = [4, 2, 0, 9].map((gsm) => gt06.decode(buildFrame(0x13, 1, Uint8Array.of(0x46, 0x06, gsm, 0x00, 0x02)), loggedIn()).reports![0]!);
    expect(levels.map((r) => r.attributes.rssi)).toEqual([4, 2, 0, 9]);
    expect(levels.map((r) => r.signalStrength)).toEqual([31, 16, 0, undefined]);
  });

  it('reads the 0x23 heartbeat: battery in volts and the GSM level', () => {
    const report = gt06.decode(buildFrame(0x23, 1, Uint8Array.of(0x02, 0x01, 0x9a, 0x03)), loggedIn()).reports![0]!;
    expect(report.attributes).toMatchObject({ ignition: true, battery: 4.1, rssi: 3 });
    expect(report.signalStrength).toBe(23);
  });

  it('gives the network technology of an 0x94 information message (sub-type 0x0B) as connection type', () => {
    const radio = (technology: number) => gt06.decode(buildFrame(0x94, 1, Uint8Array.of(0x0b, technology), true), loggedIn()).reports![0]!;
    expect(radio(0x01)).toMatchObject({ connectionType: '4G', attributes: { networkTechnology: '4G' } });
    expect(radio(0x00)).toMatchObject({ connectionType: '2G', attributes: { networkTechnology: '2G' } });
  });

  it('throws only MalformedFrameError for a frame cut inside its fix', () => {
    const cut = hex('78781f120f0a140e150bc505e51e780d0a');
    expect(() => gt06.decode(cut, loggedIn())).toThrow(MalformedFrameError);
  });

  it('reads a frame whose CRC-ITU does not match (firmwares send such), and a CRC-less WiFi frame', () => {
    const crc = Uint8Array.from(GPS_LBS);
    crc[crc.length - 3] = crc[crc.length - 3]! ^ 0x01;
    expect(gt06.decode(crc, loggedIn()).positions).toHaveLength(1);
    // 0x69 WiFi scan (corpus): the length byte holds the access-point count, no serial or CRC follow.
    const wifi = hex('787800691710231108500200cc080c4e2fa5640c4e2fa66e0d0a');
    expect(gt06.decode(wifi, loggedIn()).reply).toBeDefined();
  });

  it('applies the time zone a login announces to later device times', () => {
    const session = newSession();
    // Zone word 0x190A: 400 → 4 h 00 min, bit 3 set → west of UTC (UTC−4).
    gt06.decode(hex('787811010864717003664467100f190a0002c6d20d0a'), session);
    const p = gt06.decode(GPS_LBS, session).positions[0]!;
    expect(p.fixTime.toISOString()).toBe('2015-10-20T18:21:11.000Z');
  });

  it('reads a command answer (0x15) as a report carrying the text', () => {
    const frame = hex('78782d152500000000437574206f666620746865206675656c20737570706c793a2053756363657373210002013b898a0d0a');
    const result = gt06.decode(frame, loggedIn());
    expect(result.positions).toEqual([]);
    expect(result.reports![0]!.attributes.result).toBe('Cut off the fuel supply: Success!');
  });
});
