import { describe, expect, it } from 'vitest';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession } from '../../protocol.ts';
import { decodeH02 } from './h02-decoder.ts';

const text = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const hex = (s: string): Uint8Array => Buffer.from(s, 'hex');
const AT = new Date('2024-05-06T07:08:09Z');

describe('h02 decoder', () => {
  it('reads a V1 sentence, identifies the device and acknowledges with the server time', () => {
    const session = newSession();
    const out = decodeH02(text('*HQ,4210051415,V1,164549,A,0956.3869,N,08406.7068,W,10.00,123,221215,FFFFFBFF,712,01,0,0,6#'), session, AT);
    expect(session.deviceId).toBe('4210051415');
    expect(out.deviceId).toBe('4210051415');
    const [p] = out.positions;
    expect(p).toMatchObject({ valid: true, heading: 123, fixTime: new Date('2015-12-22T16:45:49Z') });
    expect(p!.latitude).toBeCloseTo(9.93978, 5);
    expect(p!.longitude).toBeCloseTo(-84.11178, 5);
    expect(p!.speedKmh).toBeCloseTo(18.52, 6);
    expect(p!.attributes).toMatchObject({ status: 0xfffffbff, ignition: false, io1: '712', io5: '6' });
    expect(Buffer.from(out.reply!).toString()).toBe('*HQ,4210051415,V4,V1,20240506070809#');
  });

  it('reads a binary record: BCD fields, hemisphere and validity flags, battery byte', () => {
    const out = decodeH02(hex('2410307310010503162209022212874500113466574c014028fffffbffff0000'), newSession(), AT);
    expect(out.deviceId).toBe('1030731001');
    const [p] = out.positions;
    expect(p).toMatchObject({ valid: false, heading: 28, fixTime: new Date('2002-09-22T05:03:16Z') });
    expect(p!.latitude).toBeCloseTo(22.214575, 6);
    expect(p!.longitude).toBeCloseTo(113.777623, 5);
    expect(p!.speedKmh).toBeCloseTo(14 * 1.852, 6);
    const charged = decodeH02(hex('2441091144271222470112142233983006114026520e000000fffffbffff0014060000000001cc00262b0f170a'), newSession(), AT);
    expect(charged.positions[0]!.attributes.batteryLevel).toBe(100);
  });

  it('echoes heartbeats and turns fix-less sentences into reports', () => {
    const out = decodeH02(text('*HQ,135790246811220,HTBT,100#'), newSession(), AT);
    expect(Buffer.from(out.reply!).toString()).toBe('*HQ,135790246811220,HTBT#');
    expect(out.positions).toEqual([]);
    expect(out.reports).toEqual([{ attributes: { batteryLevel: 100 } }]);
  });

  it('refuses frames it cannot read with MalformedFrameError only', () => {
    expect(() => decodeH02(hex('24410600'), newSession(), AT)).toThrow(MalformedFrameError);
    expect(() => decodeH02(text('*HQ#'), newSession(), AT)).toThrow(MalformedFrameError);
    expect(() => decodeH02(text('*HQ,1,V1,164549,A,0956.3869,N,08406.7068,W,0,0,221315,FFFFFBFF#'), newSession(), AT)).toThrow(MalformedFrameError);
  });

  it('refuses a device id longer than 20 digits before reading the rest', () => {
    const sentence = (id: string) => text(`*HQ,${id},V1,164549,A,0956.3869,N,08406.7068,W,10.00,123,221215,FFFFFBFF#`);
    expect(decodeH02(sentence('1'.repeat(20)), newSession(), AT).deviceId).toBe('1'.repeat(20));
    expect(() => decodeH02(sentence('1'.repeat(21)), newSession(), AT)).toThrow(/21 digits/);
    expect(() => decodeH02(text(`*HQ,${'9'.repeat(1900)},HTBT,100#`), newSession(), AT)).toThrow(MalformedFrameError);
  });
});
