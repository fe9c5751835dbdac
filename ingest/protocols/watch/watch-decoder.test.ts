import { describe, expect, it } from 'vitest';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession } from '../../protocol.ts';
import { decodeWatch, watchAlarm } from './watch-decoder.ts';

const text = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const decode = (s: string) => decodeWatch(text(s), newSession());
const reply = (s: string) => {
  const r = decode(s).reply;
  return r && Buffer.from(r).toString('latin1');
};

describe('watch decoder', () => {
  it('reads a UD2 fix: date ddMMyy, hemispheres, speed in km/h, radio on the 0–31 scale', () => {
    const session = newSession();
    const out = decodeWatch(text('[SG*9159059735*0066*UD2,230322,082138,A,59.55285,N,016.66185,W,12.5,090,26,14,80,70,1234,50,00000010,1,1,240,7,34505,80806406,,00]'), session);
    expect(session.deviceId).toBe('9159059735');
    expect(out.reply).toBeUndefined();
    const [p] = out.positions;
    expect(p).toMatchObject({ valid: true, fixTime: new Date('2022-03-23T08:21:38Z'), speedKmh: 12.5, heading: 90, altitude: 26, satellites: 14, signalStrength: 25 });
    expect(p!.latitude).toBeCloseTo(59.55285, 6);
    expect(p!.longitude).toBeCloseTo(-16.66185, 6);
    expect(p!.attributes).toMatchObject({ rssi: 80, batteryLevel: 70, steps: 1234, status: '00000010', motion: true });
    expect(p!.attributes.alarm).toBeUndefined();
  });

  it('reads UD_LTE as 4G and keeps negative coordinates the watch sends', () => {
    const lte = decode('[3G*9705141740*00C2*UD_LTE,260723,185105,V,-33.480366,N,-70.7630692,E,0.00,0.0,0.0,0,100,67,0,0,00000000,2,0,605,1,10006,65799,14,10020,4104,4,3,,34:60:f9:ec:19:f8,-82,0.0]');
    expect(lte.positions[0]).toMatchObject({ valid: false, connectionType: '4G', signalStrength: 31, latitude: -33.480366, longitude: -70.7630692 });
  });

  it('answers AL with AL (index kept for ZJ) and decodes the alarm from the status bits', () => {
    expect(reply('[SG*9059011020*0067*AL,240123,181628,V,54.427538,N,6.409275,W,0.00,0,0,0,19,90,0,0,00010000,1,1,234,10,55C0,3B882A2,132,,10]')).toBe('[SG*9059011020*0002*AL]');
    const zj = decode('[ZJ*689466020014198*0003*0113*AL,221121,085515,V,00.000000,N,000.000000,E,0,0,0,0,0,44,0,0,00100000,1,255,460,0,16399,234887445,0,0]');
    expect(Buffer.from(zj.reply!).toString()).toBe('[ZJ*689466020014198*0003*0002*AL]');
    expect(zj.positions[0]!.attributes.alarm).toBe('removing');
    expect(watchAlarm(0x10000)).toBe('sos');
    expect(watchAlarm(0x1)).toBe('lowBattery');
    expect(watchAlarm(0x200000)).toBe('fallDown');
    expect(watchAlarm(0x4000)).toBe('powerCut');
    expect(watchAlarm(0x10)).toBeUndefined();
  });

  it('answers the link, reporting battery and steps when it carries them', () => {
    expect(reply('[SG*8800000015*0002*LK]')).toBe('[SG*8800000015*0002*LK]');
    const lk = decode('[3G*9705141740*0009*LK,120,0,53]');
    expect(Buffer.from(lk.reply!).toString()).toBe('[3G*9705141740*0002*LK]');
    expect(lk.reports).toEqual([{ attributes: { steps: 120, batteryLevel: 53 } }]);
    expect(decode('[SG*9081000548*0009*LK,0,100]').reports).toBeUndefined();
  });

  it('answers TKQ, TKQ2, INIT and voice chunks byte for byte', () => {
    expect(reply('[3G*8800000015*0003*TKQ]')).toBe('[3G*8800000015*0003*TKQ]');
    expect(reply('[3G*8800000015*0004*TKQ2]')).toBe('[3G*8800000015*0004*TKQ2]');
    expect(reply('[3G*8800000015*0004*INIT]')).toBe('[3G*8800000015*0006*INIT,1]');
    expect(reply('[ZJ*789468050042692*0034*0439*JXTK,0,watch_7,1,6,#!AMR]')).toBe('[ZJ*789468050042692*0034*0007*JXTKR,1]');
  });

  it('reads the health messages as reports', () => {
    expect(decode('[3G*4700609403*0013*bphrt,120,79,73,,,,]').reports).toEqual([{ attributes: { pressureHigh: 120, pressureLow: 79, heartRate: 73 } }]);
    expect(decode('[3G*9705141740*000B*oxygen,0,98]').reports).toEqual([{ attributes: { bloodOxygen: 98 } }]);
    expect(decode('[3G*2104326058*000E*btemp2,1,35.29]').reports).toEqual([{ attributes: { temp1: 35.29 } }]);
    expect(decode('[3G*2104326058*000E*btemp2,0,35.29]').reports).toBeUndefined();
    expect(decode('[ZJ*5678901234*0001*0009*TEMP,36.5]').reports).toEqual([{ attributes: { temp1: 36.5 } }]);
    expect(decode('[3G*4700609403*0008*heart,72]').reports).toEqual([{ attributes: { heartRate: 72 } }]);
  });

  it('takes other messages as command answers, CONFIG as a report', () => {
    const cr = decode('[3G*8800000015*0002*CR]');
    expect(cr).toMatchObject({ positions: [], answer: { text: 'CR' }, reports: [{ attributes: { result: 'CR' } }] });
    expect(decode('[3G*8800000015*000a*UPLOAD,600]').answer).toEqual({ text: 'UPLOAD,600' });
    const config = decode('[3G*8800000015*0010*CONFIG,TY:g36a]');
    expect(config.answer).toBeUndefined();
    expect(config.reports).toEqual([{ attributes: { config: 'TY:g36a' } }]);
  });

  it('gives no position for an impossible date, and refuses what is not a watch frame', () => {
    expect(decode('[3G*8308373902*0080*UD,310217,095346,A,47.083950,N,15.4821850,E,7.60,273.8,0.0,4,15,44,0,0,00000000,0,0]').positions).toEqual([]);
    for (const bad of ['(SG*1*0002*LK)', '[SG*8800000015]', '[S*880*0002*LK]', '[SG*88 00*0002*LK]', '[SG*8800000015*zz*LK]']) {
      expect(() => decode(bad)).toThrow(MalformedFrameError);
    }
  });
});
