import { describe, expect, it } from 'vitest';
import { newSession } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { gl200 } from './gl200.ts';

const text = (s: string) => Buffer.from(s, 'latin1');

describe('gl200 decoder', () => {
  it('answers the heartbeat with its protocol version and counter', () => {
    const session = newSession();
    const result = gl200.decode(text('+ACK:GTHBD,1A0401,135790246811220,,20100214093254,11F0$'), session);
    expect(Buffer.from(result.reply!).toString('latin1')).toBe('+SACK:GTHBD,1A0401,11F0$');
    expect(result.positions).toEqual([]);
    expect(session.deviceId).toBe('135790246811220');
  });

  it('reads every point of a multi-point GTFRI in order', () => {
    const result = gl200.decode(
      text('+RESP:GTFRI,020102,135790246811220,,0,0,2,1,4.3,92,70.0,121.354335,31.222073,20090214013254,0460,0000,18d8,6141,00,0,4.3,92,70.0,121.354335,31.222073,20090101000000,0460,0000,18d8,6141,00,,20090214093254,11F0'),
      newSession(),
    );
    expect(result.positions.map((p) => p.fixTime.toISOString())).toEqual(['2009-02-14T01:32:54.000Z', '2009-01-01T00:00:00.000Z']);
    expect(result.positions[0]).toMatchObject({ latitude: 31.222073, longitude: 121.354335, speedKmh: 4.3, heading: 92, altitude: 70 });
    expect(result.positions[0]!.attributes).toMatchObject({ mcc: 460, mnc: 0, lac: 0x18d8, cid: 0x6141 });
  });

  it('turns a message without a fix into a report stamped with the send time', () => {
    const result = gl200.decode(text('+RESP:GTPFA,F50201,866425030235982,GL300M,20190208124849,0BD4$'), newSession());
    expect(result.positions).toEqual([]);
    expect(result.reports).toEqual([{ time: new Date('2019-02-08T12:48:49Z'), attributes: { type: 'PFA', alarm: 'powerOff' } }]);
  });

  it('gives GTINF\'s CSQ (kept as rssi) as signal strength, its backup battery in volts and its charge in %', () => {
    const inf = (csq: string) => `+RESP:GTINF,210102,354524044950583,,42,89011702272048900184,${csq},99,0,,,4.08,0,1,1,0,0,20170831170831,87,0.00,,,,20170831171010,0064$`;
    const report = gl200.decode(text(inf('11')), newSession()).reports![0]!;
    expect(report.signalStrength).toBe(11);
    expect(report.connectionType).toBeUndefined();
    expect(report.attributes).toMatchObject({ rssi: 11, battery: 4.08, batteryLevel: 87 });
    expect(gl200.decode(text(inf('99')), newSession()).reports![0]!.signalStrength).toBeUndefined();
  });

  it('reads the driver key of GTIDA (iButton or RFID card) onto its fix', () => {
    const result = gl200.decode(
      text('+RESP:GTIDA,060228,862894020178276,,,01C68011010000C7,1,1,0,0.0,0,413.0,-63.169675,-17.776349,20160317222129,0736,0003,6AD4,32CF,00,34.9,,,,,20160317182130,1626$'),
      newSession(),
    );
    expect(result.positions).toHaveLength(1);
    expect(result.positions[0]!.attributes).toMatchObject({ type: 'IDA', driverUniqueId: '01C68011010000C7' });
    const card = gl200.decode(text('+RESP:GTIDA,06020A,862170013895931,,,d2c4fbc5,1,1,1,0.8,0,22.2,117.198630,31.845229,20120802121626,0460,0000,5663,2BB9,00,0.0,,,,,20120802121627,008E$'), newSession());
    expect(card.positions[0]!.attributes.driverUniqueId).toBe('D2C4FBC5');
  });

  it('rejects text that is not a Queclink message', () => {
    expect(() => gl200.decode(text('+RESP:FRI,1,2$'), newSession())).toThrow(MalformedFrameError);
    expect(() => gl200.decode(text('+RESP:GTFRI,ZZ,123$'), newSession())).toThrow(MalformedFrameError);
  });
});
