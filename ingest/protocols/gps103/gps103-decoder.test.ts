import { describe, expect, it } from 'vitest';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession } from '../../protocol.ts';
import { decodeGps103 } from './gps103-decoder.ts';

const text = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const reply = (r: Uint8Array | undefined) => (r === undefined ? undefined : Buffer.from(r).toString('latin1'));

describe('gps103 decoder', () => {
  it('answers the login with LOAD and the heartbeat with ON, byte for byte', () => {
    const session = newSession();
    const login = decodeGps103(text('##,imei:359586015829802,A;'), session);
    expect(login).toEqual({ deviceId: '359586015829802', positions: [], reply: text('LOAD') });
    expect(session.deviceId).toBe('359586015829802');
    const beat = decodeGps103(text('359586015829802;'), newSession());
    expect(beat).toEqual({ deviceId: '359586015829802', positions: [], reply: text('ON') });
    expect([...beat.reply!]).toEqual([0x4f, 0x4e]);
  });

  it('reads a fix: local time moved to UTC by the UTC time field, speed in knots', () => {
    const out = decodeGps103(text('imei:359586015829802,tracker,150429094805,,F,014805.000,A,3045.8003,N,07306.2910,W,0.00,0;'), newSession());
    expect(out.reply).toBeUndefined();
    const [p] = out.positions;
    expect(p).toMatchObject({ valid: true, speedKmh: 0, heading: 0, fixTime: new Date('2015-04-29T01:48:05Z'), attributes: {} });
    expect(p!.latitude).toBeCloseTo(30.763338, 5);
    expect(p!.longitude).toBeCloseTo(-73.104850, 5);
    // Local 02:59 on the 27th, UTC 23:59:57: the fix is on the 26th.
    const midnight = decodeGps103(text('imei:359710049092324,tracker,151027025958,,F,235957.000,A,2429.5156,N,04424.5828,E,0.01,27.91,,0,0,,,;'), newSession());
    expect(midnight.positions[0]).toMatchObject({ fixTime: new Date('2015-10-26T23:59:57Z'), heading: 27.91, attributes: { ignition: false, door: false } });
    expect(midnight.positions[0]!.speedKmh).toBeCloseTo(0.01852, 6);
  });

  it('reads altitude, ignition, door, fuel and temperature where the firmware sends them', () => {
    const out = decodeGps103(text('imei:353451044508750,001,0809231929,13554900601,F,055403.000,A,2233.1870,N,11354.3067,E,0.00,30.1,65.43,1,0,10.5%,0.0%,28;'), newSession());
    expect(out.positions[0]).toMatchObject({ altitude: 65.43, heading: 30.1, attributes: { event: '001', ignition: true, door: false, fuel1: 10.5, fuel2: 0, temp1: 28 } });
    const rfid = decodeGps103(text('imei:868683020235846,rfid,160202091347,49121185,F,011344.000,A,0447.7273,N,07538.9934,W,0.00,0,,0,0,0.00%,,'), newSession());
    expect(rfid.positions[0]!.attributes.driverUniqueId).toBe('49121185');
  });

  it('names alarms from the type field, and asks the SOS button to stop with E', () => {
    const sos = decodeGps103(text('imei:100000000000000,help me,1004171910,,F,010203.000,A,0102.0003,N,00102.0003,E,1.02,'), newSession());
    expect(sos.positions[0]!.attributes.alarm).toBe('sos');
    expect(reply(sos.reply)).toBe('**,imei:100000000000000,E;');
    const alarm = (type: string) =>
      decodeGps103(text(`imei:353451044508750,${type},0809231929,,F,055403.000,A,2233.1870,N,11354.3067,E,0.00,,;`), newSession()).positions[0]!.attributes;
    expect(alarm('low battery')).toEqual({ alarm: 'lowBattery' });
    expect(alarm('ac alarm')).toEqual({ alarm: 'powerCut' });
    expect(alarm('speed')).toEqual({ alarm: 'overspeed' });
    expect(alarm('stockade')).toEqual({ alarm: 'geofence' });
    expect(alarm('move')).toEqual({ alarm: 'movement' });
    expect(alarm('sensor alarm')).toEqual({ alarm: 'vibration' });
    expect(alarm('T:+28.0')).toEqual({ alarm: 'temperature', temp1: 28 });
    expect(alarm('oil 51.67')).toEqual({ alarm: 'fuelLeak', fuelLevel: 51.67 });
    expect(alarm('acc on')).toEqual({ ignition: true });
    expect(alarm('acc off')).toEqual({ ignition: false });
    expect(alarm('tracker')).toEqual({});
    expect(alarm('001')).toEqual({ event: '001' });
    expect(alarm('kt')).toEqual({ result: 'kt' });
  });

  it('turns messages without a fix into reports: the cell with L, vehicle data with OBD', () => {
    const cell = decodeGps103(text('imei:359710049075097,help me,,,L,,,113b,,558f,,,,,0,0,,,'), newSession());
    expect(cell.positions).toEqual([]);
    expect(cell.reports).toEqual([{ attributes: { alarm: 'sos', lac: 0x113b, cid: 0x558f } }]);
    const obd = decodeGps103(text('imei:359710048977327,OBD,180301094003,5000000,0.00,0.00,98,18,68.63%,55,25.10%,1368,14.24,,,,;'), newSession());
    expect(obd.reports).toEqual([
      {
        time: new Date('2018-03-01T09:40:03Z'),
        attributes: { obdOdometer: 5000000, fuelConsumption: 0, engineHours: 98, obdSpeed: 18, engineLoad: 68.63, coolantTemp: 55, throttle: 25.1, rpm: 1368, power: 14.24 },
      },
    ]);
  });

  it('reads the alternative format with its signal strength (0–31) and satellites', () => {
    const out = decodeGps103(text('imei:861359038609986,Equipo 1,---,------,----,214734,241018,26,1,-33.42317,-70.61930,067,229,0674,1.00,08,0,1,---,*'), newSession());
    expect(out.positions[0]).toMatchObject({
      fixTime: new Date('2018-10-24T21:47:34Z'),
      valid: true,
      latitude: -33.42317,
      longitude: -70.6193,
      speedKmh: 67,
      heading: 229,
      altitude: 674,
      satellites: 8,
      signalStrength: 26,
      attributes: { rssi: 26, hdop: 1, ignition: false, charge: true },
    });
  });

  it('reads a heartbeat glued to a report, answering ON', () => {
    const out = decodeGps103(text('359769031878322imei:359769031878322,tracker,1602160718,2,F,221811.000,A,1655.2193,S,14546.6722,E,0.00,,'), newSession());
    expect(reply(out.reply)).toBe('ON');
    expect(out.positions).toHaveLength(1);
  });

  it('gives a report, not a position, for an impossible date', () => {
    const out = decodeGps103(text('imei:359586015829802,move,151329094805,,F,014805.000,A,3045.8003,N,07306.2910,W,0.00,0;'), newSession());
    expect(out).toMatchObject({ positions: [], reports: [{ attributes: { alarm: 'movement' } }] });
  });

  it('refuses what is not GPS103 with MalformedFrameError only', () => {
    expect(() => decodeGps103(text('hello;'), newSession())).toThrow(MalformedFrameError);
    expect(() => decodeGps103(text('1234x;'), newSession())).toThrow(MalformedFrameError);
    expect(() => decodeGps103(text(`imei:${'7'.repeat(21)},tracker;`), newSession())).toThrow(/21 digits/);
    expect(() => decodeGps103(text('imei:359586015829802,tracker,150429094805,,F,014805.000,A,9145.8003,N,07306.2910,W,0.00,0;'), newSession())).toThrow(MalformedFrameError);
  });
});
