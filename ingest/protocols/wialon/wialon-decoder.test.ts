import { describe, expect, it } from 'vitest';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession, type DecoderSession } from '../../protocol.ts';
import { decodeWialon } from './wialon-decoder.ts';
import { crc16 } from './wialon-fields.ts';

const bytes = (s: string): Uint8Array => Buffer.from(s, 'latin1');
const reply = (r: { reply?: Uint8Array }) => (r.reply ? Buffer.from(r.reply).toString('latin1') : undefined);
const loggedIn = (): DecoderSession => ({ options: {}, deviceId: '861230043907626' });
const withCrc = (type: string, body: string) => `#${type}#${body}${crc16(body).toString(16).toUpperCase().padStart(4, '0')}`;

describe('wialon decoder', () => {
  it('logs in with 1.1 and 2.0 logins and answers #AL#1 byte for byte', () => {
    const session = newSession();
    const v11 = decodeWialon(bytes('#L#861230043907626;pass'), session);
    expect(v11).toEqual({ deviceId: '861230043907626', positions: [], reply: bytes('#AL#1\r\n') });
    expect(session.deviceId).toBe('861230043907626');
    const v20 = decodeWialon(bytes('#L#2.0;42001300083;;CE45'), newSession());
    expect(v20.deviceId).toBe('42001300083');
    expect(reply(v20)).toBe('#AL#1\r\n');
  });

  it('refuses a login without a usable id', () => {
    expect(() => decodeWialon(bytes('#L#;pass'), newSession())).toThrow(MalformedFrameError);
    expect(() => decodeWialon(bytes(`#L#${'9'.repeat(33)};pass`), newSession())).toThrow(/not usable/);
  });

  it('answers a ping with #AP#', () => {
    expect(reply(decodeWialon(bytes('#P#'), loggedIn()))).toBe('#AP#\r\n');
  });

  it('reads short data: time, coordinates, speed in km/h, course, altitude, satellites; answers #ASD#1', () => {
    const out = decodeWialon(bytes('#SD#270413;205601;5544.6025;N;03739.6834;W;12.5;271;-3.5;7'), loggedIn());
    expect(reply(out)).toBe('#ASD#1\r\n');
    const [p] = out.positions;
    expect(p).toMatchObject({ fixTime: new Date('2013-04-27T20:56:01Z'), valid: true, speedKmh: 12.5, heading: 271, altitude: -3.5, satellites: 7 });
    expect(p!.latitude).toBeCloseTo(55.743375, 6);
    expect(p!.longitude).toBeCloseTo(-37.66139, 5);
  });

  it('reads extended data: hdop, inputs, outputs, ADC, iButton as driverUniqueId, typed params, CSQ as radio', () => {
    const out = decodeWialon(
      bytes('#D#270413;205601;5544.6025;S;03739.6834;E;1;2;3;2;0.9;5;1;14.77,0.02;01A2B3C4;count1:1:564,fuel:2:45.8,hw:3:V4.5,SOS:1:1,pwr_ext:2:12.6,gsm_csq:1:17'),
      loggedIn(),
    );
    expect(reply(out)).toBe('#AD#1\r\n');
    const [p] = out.positions;
    expect(p!.latitude).toBeLessThan(0);
    expect(p!.valid).toBe(false); // 2 satellites are no fix
    expect(p!.signalStrength).toBe(17);
    expect(p!.attributes).toEqual({
      count1: 564,
      fuel: 45.8,
      hw: 'V4.5',
      sos: 1,
      alarm: 'sos',
      pwr_ext: 12.6,
      power: 12.6,
      gsm_csq: 17,
      hdop: 0.9,
      input: 5,
      output: 1,
      adc1: 14.77,
      adc2: 0.02,
      driverUniqueId: '01A2B3C4',
    });
  });

  it('reads UTF-8 parameter names and keeps text values', () => {
    const out = decodeWialon(Buffer.from('#D#080914;073235;5027.50625;N;03026.19321;E;0.7;0;NA;4;NA;NA;NA;;NA;Батарея:3:100 %', 'utf8'), loggedIn());
    expect(out.positions[0]!.attributes).toEqual({ батарея: '100 %' });
  });

  it('gives a report for data without a location or without a time', () => {
    const noFix = decodeWialon(bytes('#D#120319;112003;NA;NA;NA;NA;0.000;NA;NA;0;NA;NA;NA;NA;NA;pwr_int:2:4.1'), loggedIn());
    expect(noFix.positions).toEqual([]);
    expect(noFix.reports).toEqual([{ time: new Date('2019-03-12T11:20:03Z'), attributes: { pwr_int: 4.1, battery: 4.1 } }]);
    expect(reply(noFix)).toBe('#AD#1\r\n');
    const noTime = decodeWialon(bytes('#SD#NA;NA;5544.6025;N;03739.6834;E;1;2;3;4'), loggedIn());
    expect(noTime).toMatchObject({ positions: [], reports: [{ attributes: {} }] });
  });

  it('answers the Wialon error codes for records it cannot register', () => {
    const code = (packet: string) => reply(decodeWialon(bytes(packet), loggedIn()));
    expect(code('#SD#270413;205601;5544.6025;N;03739.6834')).toBe('#ASD#-1\r\n');
    expect(code('#SD#271313;205601;5544.6025;N;03739.6834;E;1;2;3;4')).toBe('#ASD#0\r\n');
    expect(code('#SD#270413;205601;5599.6025;N;03739.6834;E;1;2;3;4')).toBe('#ASD#10\r\n');
    expect(code('#SD#270413;205601;5544.6025;N;03739.6834;E;fast;2;3;4')).toBe('#ASD#11\r\n');
    expect(code('#SD#270413;205601;5544.6025;N;03739.6834;E;1;2;3;x')).toBe('#ASD#12\r\n');
    expect(code('#D#270413;205601;5544.6025;N;03739.6834;E;1;2;3;4;1;in;0;NA;NA;NA')).toBe('#AD#13\r\n');
    expect(code('#D#270413;205601;5544.6025;N;03739.6834;E;1;2;3;4;1;0;0;1,x;NA;NA')).toBe('#AD#14\r\n');
  });

  it('checks 2.0 checksums of data packets and answers the checksum code when they are wrong', () => {
    const body = '300924;154245;5554.350052;N;3644.670410;E;2.92;NA;NA;NA;';
    expect(reply(decodeWialon(bytes(withCrc('SD', body)), loggedIn()))).toBe('#ASD#1\r\n');
    const bad = decodeWialon(bytes(`#SD#${body}0000`), loggedIn());
    expect(bad.positions).toEqual([]);
    expect(reply(bad)).toBe('#ASD#13\r\n');
    const extended = '220323;114150;2234.80479;N;11354.87786;E;0;NA;59;11;NA;NA;NA;;NA;di_light:1:1;';
    expect(decodeWialon(bytes(withCrc('D', extended)), loggedIn()).positions).toHaveLength(1);
    expect(reply(decodeWialon(bytes(`#D#${extended}FFFF`), loggedIn()))).toBe('#AD#16\r\n');
  });

  it('reads a black box as archived records and answers how many it registered', () => {
    const a = '080914;073235;5027.50625;N;03026.19321;E;0.700;0.000;NA;4;NA;NA;NA;;NA;NA';
    const b = '080914;073420;5027.50845;N;03026.18854;E;1.996;292.540;NA;4';
    const out = decodeWialon(bytes(`#B#${a}|${b}|bad;record`), loggedIn());
    expect(out.positions.map((p) => p.attributes.archive)).toEqual([true, true]);
    expect(reply(out)).toBe('#AB#2\r\n');
    const checked = decodeWialon(bytes(withCrc('B', `${a}|${b}|`)), loggedIn());
    expect(reply(checked)).toBe('#AB#2\r\n');
    expect(reply(decodeWialon(bytes(`#B#${a}|${b}|0000`), loggedIn()))).toBe('#AB#0\r\n');
  });

  it('checks a 2.0 checksum over the UTF-8 bytes the device sent, Cyrillic parameter names included', () => {
    // The device sums what it sends: `Батарея` is 14 bytes of UTF-8, not 7 characters.
    const record = '080914;073235;5027.50625;N;03026.19321;E;0.700;0.000;NA;4;NA;NA;NA;;NA;Батарея:3:100 %|';
    const sent = Buffer.from(record, 'utf8');
    const crc = crc16(sent.toString('latin1')).toString(16).toUpperCase().padStart(4, '0');
    const out = decodeWialon(Buffer.concat([Buffer.from('#B#'), sent, Buffer.from(crc)]), loggedIn());
    expect(reply(out)).toBe('#AB#1\r\n');
    expect(out.positions[0]!.attributes['батарея']).toBe('100 %');
    // A single-byte code page (Windows-1251 here) is summed as those bytes.
    const cp1251 = Buffer.concat([Buffer.from('#D#220323;114150;2234.80479;N;11354.87786;E;0;NA;59;11;NA;NA;NA;;NA;'), Buffer.from([0xc1, 0xe0, 0xf2]), Buffer.from(':1:94;')]);
    const covered = cp1251.subarray(3).toString('latin1');
    const withSum = Buffer.concat([cp1251, Buffer.from(crc16(covered).toString(16).toUpperCase().padStart(4, '0'))]);
    expect(reply(decodeWialon(withSum, loggedIn()))).toBe('#AD#1\r\n');
  });

  it('takes the device from a UDP-style prefix, with or without 2.0;', () => {
    const session = newSession();
    expect(decodeWialon(bytes('99999999#SD#270413;205601;5544.6025;N;03739.6834;E;1;2;3;4'), session).deviceId).toBe('99999999');
    expect(decodeWialon(bytes('2.0;77777#P#'), session).deviceId).toBe('77777');
    expect(session.deviceId).toBe('77777');
  });

  it('reads nothing and answers nothing before the device has logged in', () => {
    expect(decodeWialon(bytes('#SD#270413;205601;5544.6025;N;03739.6834;E;1;2;3;4'), newSession())).toEqual({ positions: [] });
    expect(decodeWialon(bytes('#B#x'), newSession())).toEqual({ positions: [] });
    expect(decodeWialon(bytes('#M#hello'), newSession())).toEqual({ positions: [] });
  });

  it('refuses lines without a #TYPE# header with MalformedFrameError only', () => {
    for (const line of ['hello', '#', '##', '#sd#1', '\xff#D']) expect(() => decodeWialon(bytes(line), loggedIn())).toThrow(MalformedFrameError);
    expect(decodeWialon(bytes('#US#firmware'), loggedIn())).toEqual({ deviceId: '861230043907626', positions: [] });
  });
});
