import { describe, expect, it } from 'vitest';
import { cutFrame } from '../../frame-cutter.ts';
import { sampleBytes, corpusSamples } from '../../conformance/corpus.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession } from '../../protocol.ts';
import { teltonika } from './teltonika.ts';
import { encodeTeltonikaCommand } from './teltonika-encoder.ts';
import { applyIo } from './teltonika-io.ts';

const login = Buffer.from('000f333536333037303432343431303133', 'hex'); // IMEI 356307042441013
// A real Codec 8 packet with one record (from the conformance corpus).
const avl = sampleBytes(corpusSamples('teltonika').find((s) => s.test_method === 'testDecode' && s.order === 24)!);

describe('Teltonika framer', () => {
  it('cuts the keep-alive byte, the login and an AVL packet from one stream', () => {
    const stream = Buffer.concat([Buffer.from([0xff]), login, avl]);
    const first = teltonika.nextFrame(stream);
    expect(first).toMatchObject({ kind: 'frame', consumed: 1 });
    const second = teltonika.nextFrame(stream.subarray(1));
    expect(second).toMatchObject({ kind: 'frame', consumed: login.length });
    const third = teltonika.nextFrame(stream.subarray(1 + login.length));
    expect(third.kind === 'frame' && Buffer.from(third.frame).equals(avl)).toBe(true);
  });

  it('asks for more bytes at every split point of a packet', () => {
    for (let cut = 1; cut < avl.length; cut++) expect(teltonika.nextFrame(avl.subarray(0, cut)).kind).toBe('incomplete');
    expect(teltonika.nextFrame(avl).kind).toBe('frame');
  });

  it('refuses a length beyond the maximum frame and a login length that is no IMEI', () => {
    expect(cutFrame(teltonika, Buffer.from('00000000ffffffff', 'hex')).kind).toBe('invalid');
    expect(teltonika.nextFrame(Buffer.from('7fff', 'hex')).kind).toBe('invalid');
    expect(teltonika.nextFrame(Buffer.from('0000000100000010', 'hex')).kind).toBe('invalid');
  });
});

describe('Teltonika decoder', () => {
  it('accepts a login with 0x01 and identifies the session', () => {
    const session = newSession();
    const result = teltonika.decode(login, session);
    expect(result).toEqual({ deviceId: '356307042441013', positions: [], reply: Uint8Array.of(1) });
    expect(session.deviceId).toBe('356307042441013');
  });

  it('decodes nothing and acknowledges nothing before the login', () => {
    expect(teltonika.decode(avl, newSession())).toEqual({ positions: [] });
  });

  it('acknowledges an AVL packet with its record count as four bytes', () => {
    const session = newSession();
    teltonika.decode(login, session);
    const result = teltonika.decode(avl, session);
    expect(result.positions).toHaveLength(1);
    expect(Buffer.from(result.reply!).toString('hex')).toBe('00000001');
    const p = result.positions[0]!;
    expect(p.fixTime.getTime()).toBeGreaterThan(Date.UTC(2017, 0, 1));
    expect(Math.abs(p.latitude)).toBeLessThanOrEqual(90);
  });

  it('refuses a packet whose CRC does not match, and a login without an IMEI', () => {
    const session = newSession();
    teltonika.decode(login, session);
    const corrupt = Buffer.from(avl);
    corrupt[20] = corrupt[20]! ^ 0xff;
    expect(() => teltonika.decode(corrupt, session)).toThrow(MalformedFrameError);
    expect(() => teltonika.decode(Buffer.from('0003414243', 'hex'), newSession())).toThrow(MalformedFrameError);
  });

  it('maps IO elements to attribute names and keeps unknown ones raw', () => {
    const session = newSession();
    teltonika.decode(login, session);
    const eye = sampleBytes(corpusSamples('teltonika').find((s) => s.test_method === 'testDecode' && s.order === 44)!);
    const attributes = teltonika.decode(eye, session).positions[0]!.attributes;
    expect(attributes).toMatchObject({ ignition: false, motion: false, rssi: 5, odometer: 329 });
    expect(attributes.power).toBeCloseTo(12.458, 9);
    expect(attributes.battery).toBeCloseTo(4.023, 9);
    expect(attributes.eyeTemp1).toBeCloseTo(-11.87, 9);
    expect(attributes.io10808).toBe(0);
  });
});

describe('Teltonika driver keys', () => {
  it('reads the iButton (IO 78) and the RFID card (IO 207) as 16 hex digits; a zero key is no key', () => {
    for (const id of [78, 207]) {
      const into: Parameters<typeof applyIo>[0] = {};
      applyIo(into, id, 0x01c68011010000c7n, 8);
      expect(into).toEqual({ driverUniqueId: '01C68011010000C7' });
      const none: Parameters<typeof applyIo>[0] = {};
      applyIo(none, id, 0n, 8);
      expect(none).toEqual({});
    }
  });
});

describe('Teltonika fuel level', () => {
  it('reads the OBD (IO 48) and CAN (IO 89) level as percent `fuel`, and the CAN level in 0.1 L (IO 84) as litres `fuelVolume`', () => {
    const into: Parameters<typeof applyIo>[0] = {};
    applyIo(into, 89, 63, 1);
    expect(into).toEqual({ fuel: 63 });
    applyIo(into, 48, 41, 1);
    expect(into).toEqual({ fuel: 41 });
    applyIo(into, 84, 523, 2);
    expect(into).toEqual({ fuel: 41, fuelVolume: 52.3 });
  });
});

describe('Teltonika encoder', () => {
  it('builds a Codec 12 command frame the framer and CRC accept', () => {
    const frame = encodeTeltonikaCommand('setdigout 1');
    expect(Buffer.from(frame).toString('hex')).toBe(
      `00000000${(19 + 0).toString(16).padStart(8, '0')}0c0105${'0000000b'}${Buffer.from('setdigout 1').toString('hex')}01${Buffer.from(frame.subarray(frame.length - 4)).toString('hex')}`,
    );
    const cut = teltonika.nextFrame(frame);
    expect(cut.kind).toBe('frame');
    // A device answers in the same codec; decoding our own frame exercises the CRC and layout.
    const session = newSession();
    session.deviceId = '1';
    expect(teltonika.decode(frame, session).reports?.[0]?.attributes).toMatchObject({ type: 5, result: 'setdigout 1' });
  });
});
