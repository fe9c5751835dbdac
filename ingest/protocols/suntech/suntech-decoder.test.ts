import { describe, expect, it } from 'vitest';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession, type DecoderSession } from '../../protocol.ts';
import { decodeSuntech } from './suntech-decoder.ts';

const text = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const decode = (s: string, session: DecoderSession = newSession()) => decodeSuntech(text(s), session);

describe('suntech decoder', () => {
  it('reads a legacy ST300 status report with its I/O', () => {
    const session = newSession();
    const out = decode('ST300STT;100850000;01;010;20081017;07:41:56;00100;+37.478519;+126.886819;000.012;000.00;9;1;0;15.30;001100;1;0', session);
    expect(session.deviceId).toBe('100850000');
    expect(out.positions).toHaveLength(1);
    expect(out.positions[0]).toMatchObject({
      fixTime: new Date('2008-10-17T07:41:56Z'),
      valid: true,
      latitude: 37.478519,
      longitude: 126.886819,
      speedKmh: 0.012,
      heading: 0,
      satellites: 9,
    });
    expect(out.positions[0]!.attributes).toMatchObject({ type: 'STT', versionFw: '010', odometer: 0, power: 15.3, ignition: false, in1: false, in2: true, in3: true, out1: false, out2: false, status: 1, index: 0 });
    expect(out.reply).toBeUndefined();
  });

  it('turns EMG and ALT codes into alarms', () => {
    const emg = decode('ST300EMG;205174410;14;712;20110101;00:00:07;00000;+20.593923;-100.336716;000.000;000.00;0;0;0;16.57;000000;1;');
    expect(emg.positions[0]!.attributes.alarm).toBe('sos');
    const alt = decode('ST300ALT;205174410;14;712;20110101;00:00:07;00000;+20.593923;-100.336716;000.000;000.00;0;0;0;16.57;000000;41;');
    expect(alt.positions[0]!.attributes.alarm).toBe('powerCut');
    const universal = decode('ALT;0950030205;3FFFFF;95;1.0.11;0;20221017;21:41:30;02F2F402;334;20;0F1D;45;+25.791061;-100.170745;0.00;0.00;18;1;00000101;00000000;42;2;');
    expect(universal.positions[0]!.attributes).toMatchObject({ alarm: 'sos', alertId: '42', archive: true, input: 5, ignition: true });
  });

  it('reads the universal mask, its assigned fields and the ST4xx cells with their signal', () => {
    const stt = decode('STT;0560001616;BFFFFF;56;1.0.15;1;20200219;20:52:25;00008D6C;334;20;0925;24;+20.741764;-103.430364;0.00;0.00;19;1;00000001;00000000;2;1;1765;00008003;0.0;12.14;136598');
    expect(stt.positions[0]!.attributes).toMatchObject({ index: 1765, input: 1, ignition: true, cid: 0x8d6c, mcc: 334, mnc: 20, lac: 0x925, assign1: '0.0', assign2: '12.14', assign16: '136598' });
    const st4 = decode('ST410STT;007272376;408;01;21651;732;123;-65;1824;1;21654;732;123;1824;0;0;22542;732;123;1824;0;0;21656;732;123;1824;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;0;4.08;1;0077;4;20180308;18:00:36;+04.727743;-074.066398;000.000;000.00;11;1');
    expect(st4.positions[0]).toMatchObject({ signalStrength: 24, satellites: 11, valid: true });
    expect(st4.positions[0]!.attributes).toMatchObject({ cid: 21651, mcc: 732, mnc: 123, lac: 1824, rssi: -65, battery: 4.08, index: 77, status: 4 });
  });

  it('reads UEX extended data: fuel sensors, driver logins and free text', () => {
    const fuel = decode('ST600UEX;008728327;20;568;20200602;17:10:03;0bf1a893;334;20;2f19;23;+20.514492;-100.743221;000.033;000.00;12;1;41564973;13.17;000000;44;t_0=1C;N_0=0419.0;t_1=22;N_1=0001.0;Q_D=09\n\r;76;113771;4.1;1');
    expect(fuel.positions[0]!.attributes).toMatchObject({ temp0: 0x1c, fuel0: 0x419, fuel1: 1, fuel: 1050, drivingQuality: 9 });
    const driver = decode('ST300UEX;511331307;45;311;20210420;12:41:01;12361;-01.280825;-047.931773;000.000;000.00;16;1;0;12.54;000000;23;GTSL|6|1|0|9255143|2|;6F;000276;0.0;1;00000000000000;0');
    expect(driver.positions[0]!.attributes.driverUniqueId).toBe('9255143');
  });

  it('reads the hour-meter tail when the device is configured with hbm', () => {
    const session = newSession();
    session.options.hbm = true;
    const out = decode('ST300ALT;007239104;40;313;20190112;01:07:16;c99139;+04.703287;-074.148897;000.000;189.72;21;1;425512;12.61;100000;33;003188;4.1;1', session);
    expect(out.positions[0]!.attributes).toMatchObject({ hours: 3188 * 60_000, battery: 4.1 });
    expect(out.positions[0]!.attributes.archive).toBeUndefined();
  });

  // Over TCP Suntech devices expect no answer: the manuals' ACK is for UDP only, and never for a keep-alive.
  it('identifies the keep-alive, answers nothing and gives no record', () => {
    const out = decode('ALV;0560001616');
    expect(out).toEqual({ deviceId: '0560001616', positions: [] });
    const legacy = decode('SA200ALV;317652');
    expect(legacy).toEqual({ deviceId: '317652', positions: [] });
  });

  it('reads a travel report as a report with the driver, and ST910 emergencies as alarms', () => {
    const hte = decode('ST300HTE;100850001;04;248;20110101;00:13:52;167559;12.28;004005;0.0;1;0;3;3;0;-22.881018;-047.070831;-22.881018;-047.070831;000.000;000.000;0;0;3;0;0;0;01E04D44160000');
    expect(hte.positions).toEqual([]);
    expect(hte.reports).toEqual([{ time: new Date('2011-01-01T00:13:52Z'), attributes: { type: 'HTE', driverUniqueId: '01E04D44160000' } }]);
    const emergency = decode('ST910;Emergency;205576803;500;20170319;12:15:22;-22.846014;-046.322176;000.000;000.00;0;2');
    expect(emergency.positions[0]).toMatchObject({ valid: false, attributes: { alarm: 'general', versionFw: '500' } });
  });

  it('refuses what it cannot read with MalformedFrameError only', () => {
    for (const bad of [
      'hello',
      ';;;',
      'ST300STT;100850000;01;010;20081317;07:41:56;00100;+37.478519;+126.886819;000.012;000.00;9;1;0;15.30;001100;1;0',
      'ST300STT;100850000;01;010;20081017;07:41:56;00100;+97.478519;+126.886819;000.012;000.00;9;1;0;15.30;001100;1;0',
      'ST300STT;100850000;01;010;20081017',
      'STT;0560001616;ZZ',
      `ST300STT;${'9'.repeat(21)};01`,
    ]) {
      expect(() => decode(bad), bad).toThrow(MalformedFrameError);
    }
  });
});
