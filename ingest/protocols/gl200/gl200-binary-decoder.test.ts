import { describe, expect, it } from 'vitest';
import { corpusSamples, sampleBytes } from '../../conformance/corpus.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession } from '../../protocol.ts';
import { gl200 } from './gl200.ts';

// Captures from Queclink GV/GB devices (Traccar's binary decoder test).
const hex = (s: string) => Buffer.from(s, 'hex');
const vgn = hex('2b4556542d00fc1fbf0063450102020956325403000343056437f8220700000200000000010000160100f2007eff75a1f0025c6b1a07e1080108241a02680003189c1ac500000000000002100800000000000000000007e1080108241a19e24e4e0d0a');
const rsp = hex('2b5253500700fc1fbf005d4501020209563254030003430564377e42071001000000000000007eff75a151025c6a8107e10801081a2a02680003189c1ac500000000000002100700000000000000000007e1080108241019e17ebe0d0a');
const lcb = hex('2b5253500300fc1fff0064450102020867623130302d446f642f442105007018217345005f010100000001100045073c4d4101db86bd07e106130b2b0f0460000018770013000000030000000106020f2300002714301107e106130b2b1003424efb0d0a');
const inf = hex('2b494e4601fd7f0076676231303000000045010202090104020500004100054007e107150b061d0000003f010e02580000000000d0312a1013648935103226313921591f1200000000000302680003189c1ac3001b02680003189c1ac4000d02680003189c1ac5001207e107150b0d3704f658060d0a');
const ack = hex('2b41434b017f244501010108676231303000000000ffff07e1070b03112d054dfe030d0a');
const record = hex('2b000038000865134050947226820300030000216a3ed6f101895000521629fa8b28f402ac1a8e6a3ed6f100001600000010f505010ff824');

describe('gl200 binary decoder', () => {
  it('reads an ignition-on event: its fix, battery, supply and cell, and who sent it', () => {
    const session = newSession();
    const result = gl200.decode(vgn, session);
    expect(result.deviceId).toBe('6211119207959184133');
    expect(session.deviceId).toBe(result.deviceId);
    expect(result.positions).toHaveLength(1);
    const p = result.positions[0]!;
    expect(p).toMatchObject({
      fixTime: new Date('2017-08-01T08:36:26Z'),
      // Accuracy 0: the last known location, as in the text protocol.
      valid: false,
      latitude: 39.611162,
      longitude: -9.068048,
      altitude: 126,
      speedKmh: 22.1,
      heading: 242,
      satellites: 7,
    });
    expect(p.attributes).toEqual({
      type: 'VGN', reportType: 45, ignition: true, hdop: 0, batteryLevel: 100, power: 14.328, versionFw: '0209',
      mcc: 268, mnc: 3, lac: 0x189c, cid: 0x1ac5,
    });
    expect(result.reply).toBeUndefined();
  });

  it('reads a position report, and marks the same report buffered (+BSP) as archive', () => {
    const live = gl200.decode(rsp, newSession()).positions;
    expect(live).toHaveLength(1);
    expect(live[0]).toMatchObject({ fixTime: new Date('2017-08-01T08:26:42Z'), latitude: 39.611009, longitude: -9.068207, satellites: 7 });
    expect(live[0]!.attributes).toMatchObject({ reportType: 7, power: 14.206, batteryLevel: 100 });
    expect(live[0]!.attributes.archive).toBeUndefined();
    const buffered = Buffer.from(rsp);
    buffered.write('+BSP', 0, 'latin1');
    expect(gl200.decode(buffered, newSession()).positions[0]!.attributes.archive).toBe(true);
  });

  it('skips the caller number of a location-by-call report', () => {
    const p = gl200.decode(lcb, newSession()).positions;
    expect(p).toHaveLength(1);
    expect(p[0]).toMatchObject({ fixTime: new Date('2017-06-19T11:43:15Z'), valid: true, latitude: 31.164093, longitude: 121.392449, altitude: 69, heading: 272 });
    expect(p[0]!.attributes).toMatchObject({ type: 'LCB', mcc: 460, mnc: 0, lac: 0x1877, cid: 0x13 });
  });

  it('unpacks a compressed track into one fix a second, each difference applied to the point before', () => {
    // The 1.4 KB compressed +RSP capture (type 100) is kept in the corpus only.
    const compressed = corpusSamples('gl200bin').find((s) => s.payload.startsWith('2b525350640'))!;
    const track = gl200.decode(sampleBytes(compressed), newSession()).positions;
    expect(track).toHaveLength(268);
    expect(track[0]).toMatchObject({ fixTime: new Date('2017-08-01T08:36:27Z'), latitude: 39.611129, longitude: -9.068108, speedKmh: 22.7, heading: 240, satellites: 5 });
    expect(track[1]).toMatchObject({ fixTime: new Date('2017-08-01T08:36:28Z'), latitude: 39.611095, longitude: -9.06817, speedKmh: 22.8, heading: 239 });
    expect(track.at(-1)).toMatchObject({ fixTime: new Date('2017-08-01T08:40:56Z'), latitude: 39.599281, longitude: -9.068689 });
    // Points without a fix still take their second: 269 seconds for 268 fixes.
    const steps = track.slice(1).map((p, i) => (p.fixTime.getTime() - track[i]!.fixTime.getTime()) / 1000);
    expect(steps.every((s) => Number.isInteger(s) && s >= 1)).toBe(true);
    expect(steps.reduce((a, b) => a + b, 0)).toBe(269);
  });

  it('reads the GNSS item of the record format and the BCD IMEI', () => {
    const result = gl200.decode(record, newSession());
    expect(result.deviceId).toBe('865134050947226');
    expect(result.positions).toEqual([
      {
        fixTime: new Date(0x6a3ed6f1 * 1000),
        valid: true,
        latitude: 44.833422,
        longitude: -91.543308,
        altitude: 434.1,
        speedKmh: 0,
        heading: 0,
        satellites: 5,
        attributes: { hdop: 2.2 },
      },
    ]);
  });

  it('turns an information report into a report stamped with its send time', () => {
    const result = gl200.decode(inf, newSession());
    expect(result.positions).toEqual([]);
    expect(result.reports).toEqual([{ time: new Date('2017-07-21T11:13:55Z'), attributes: { type: 'INF', reportType: 1, versionFw: '0209' } }]);
  });

  it('answers a binary heartbeat with the text heartbeat acknowledgement, version and count echoed', () => {
    // Made to the binary header order (no heartbeat capture at hand): +HBD, mask, length, device type,
    // protocol version, firmware, then the trailer: send time, count 0x1A2B, checksum, \r\n.
    const hbd = Buffer.concat([Buffer.from('+HBD', 'latin1'), hex('00'), hex('17'), hex('45010209'), hex('07e1080108241a'), hex('1a2b'), hex('0000'), hex('0d0a')]);
    hbd[5] = hbd.length;
    const session = newSession();
    session.deviceId = '865134050947226';
    const result = gl200.decode(hbd, session);
    expect(Buffer.from(result.reply!).toString('latin1')).toBe('+SACK:GTHBD,450102,1A2B$');
    expect(result).toMatchObject({ deviceId: '865134050947226', positions: [] });
  });

  it('reads a binary command acknowledgement as nothing, as its layout is not known', () => {
    expect(gl200.decode(ack, newSession())).toEqual({ deviceId: undefined, positions: [] });
  });

  it('throws MalformedFrameError for every truncation that cuts into the fix', () => {
    // Where each frame's fix (and, for the record format, its records) ends.
    for (const [frame, fixEnd] of [[vgn, 69], [rsp, 63], [record, 52]] as const) {
      expect(gl200.decode(frame.subarray(0, fixEnd), newSession()).positions).toHaveLength(1);
      for (let cut = 1; cut < fixEnd; cut++) {
        expect(() => gl200.decode(frame.subarray(0, cut), newSession()), `${frame.subarray(0, 4).toString('latin1')} cut at ${cut}`).toThrow(MalformedFrameError);
      }
    }
  });
});
