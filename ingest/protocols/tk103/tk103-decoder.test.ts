import { describe, expect, it } from 'vitest';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession } from '../../protocol.ts';
import { decodeTk103 } from './tk103-decoder.ts';

const text = (s: string): Uint8Array => Buffer.from(s, 'latin1');

describe('tk103 decoder', () => {
  it('reads a compact BR00 fix with its state fields, speed in km/h', () => {
    const session = newSession();
    const out = decodeTk103(text('(088047365460BR00151024A2555.3531S02855.3329E004.7055148276.1701000000L00009AA3)'), session);
    expect(session.deviceId).toBe('088047365460');
    const [p] = out.positions;
    expect(p).toMatchObject({ valid: true, speedKmh: 4.7, heading: 276.17, fixTime: new Date('2015-10-24T05:51:48Z') });
    expect(p!.latitude).toBeCloseTo(-25.92255, 5);
    expect(p!.longitude).toBeCloseTo(28.92222, 5);
    expect(p!.attributes).toEqual({ charge: true, ignition: true, io1: 0, io2: 0, io3: 0, fuel: 0, odometer: 0x9aa3 });
  });

  it('answers the handshake and the login', () => {
    const hello = decodeTk103(text('(027044702512BP00027044702512HSO01A4)'), newSession());
    expect(Buffer.from(hello.reply!).toString()).toBe('(027044702512AP01HSO)');
    expect(hello.positions).toEqual([]);
    const login = decodeTk103(text('(088048003342BP05354188048003342150917A1352.9801N10030.9050E000.0103115265.5600010000L000003F9)'), newSession());
    expect(Buffer.from(login.reply!).toString()).toBe('(088048003342AP05)');
    expect(login.positions).toHaveLength(1);
  });

  it('reads the comma form with altitude and satellites, and type-named events', () => {
    const out = decodeTk103(text('(864555555555555,DW3B,131117,A,5544.02870N,01315.08194E,1.597,223707,291.65,-0.10,4)'), newSession());
    expect(out.positions[0]).toMatchObject({ altitude: -0.1, satellites: 4, speedKmh: 1.597, fixTime: new Date('2017-11-13T22:37:07Z') });
    const moved = decodeTk103(text('(864768011069660,ZC11,250517,V,0000.0000N,00000.0000E,000.0,114725,000.0,0.00,11)'), newSession());
    expect(moved.positions[0]!.attributes.alarm).toBe('movement');
  });

  it('turns fix-less messages into reports', () => {
    const battery = decodeTk103(text('(864768010159785,ZC20,291015,030413,3,362,65535,255)'), newSession());
    expect(battery.reports).toEqual([{ time: new Date('2015-10-29T03:04:13Z'), attributes: { batteryLevel: 20, battery: 3.62 } }]);
    const answer = decodeTk103(text('(864555555555555,ZC03,191117,234207,$Notice: Device version: 1.0$)'), newSession());
    expect(answer.reports![0]!.attributes.result).toBe('Notice: Device version: 1.0');
  });

  it('refuses frames without a readable header with MalformedFrameError only', () => {
    expect(() => decodeTk103(text('(hello)'), newSession())).toThrow(MalformedFrameError);
    expect(() => decodeTk103(text('no parentheses'), newSession())).toThrow(MalformedFrameError);
    expect(() => decodeTk103(text('(012345678901BR00151024A2555.3531S99999.9999E004.7055148276.1701000000L00009AA3)'), newSession())).toThrow(MalformedFrameError);
  });

  it('refuses a device id longer than 20 characters in the comma form', () => {
    const login = (id: string) => text(`(${id},BP05,000)`);
    expect(decodeTk103(login('A'.repeat(20)), newSession()).deviceId).toBe('A'.repeat(20));
    expect(() => decodeTk103(login('A'.repeat(21)), newSession())).toThrow(/21 characters/);
    expect(() => decodeTk103(login('7'.repeat(1900)), newSession())).toThrow(MalformedFrameError);
  });
});
