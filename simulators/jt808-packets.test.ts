import { describe, expect, it } from 'vitest';
import { cutFrame } from '../ingest/frame-cutter.ts';
import { newSession, type DecodedFrame, type DecoderSession } from '../ingest/protocol.ts';
import { jt808Commands } from '../ingest/protocols/jt808/jt808-commands.ts';
import { jt808 } from '../ingest/protocols/jt808/jt808.ts';
import { jt808LocationBody, jt808TerminalResponse, readJt808PlatformMessage, terminalBcd } from './jt808-packets.ts';
import type { SimulatedFix } from './teltonika-packets.ts';
import { jt808Dialect } from './tracker-dialect.ts';

const IMEI = '356307042441013';
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

const fix = (over: Partial<SimulatedFix> = {}): SimulatedFix => ({
  time: new Date('2024-05-01T14:30:07Z'), latitude: 19.4326, longitude: -99.1332, altitude: 2240, speedKmh: 42.5, heading: 271, satellites: 9, ignition: true, odometer: 123_456, ...over,
});

/** Every frame of a stream through the jt808 framer and decoder, as one connection would. */
function decodeStream(stream: Uint8Array, session: DecoderSession): DecodedFrame[] {
  const out: DecodedFrame[] = [];
  let rest = stream;
  for (;;) {
    const next = cutFrame(jt808, rest);
    if (next.kind === 'incomplete' || next.kind === 'invalid') break;
    rest = rest.subarray(next.consumed);
    if (next.kind === 'frame') out.push(jt808.decode(next.frame, session));
  }
  expect(rest.length).toBe(0);
  return out;
}

describe('simulated JT/T 808 packets, against frames computed by hand from the standard', () => {
  it('frame a 2013 header with escapes and XOR checksum, and a 2019 header with the IMEI as terminal number', () => {
    // 0x0001 answering serial 0x002a (0x8105) with success, from 013912345678, serial 0x7e7d: both serial bytes escaped; XOR 0x99.
    expect(hex(jt808TerminalResponse('13912345678', { serial: 0x2a, id: 0x8105 }, 0, 0x7e7d))).toBe('7e000100050139123456787d027d01002a810500997e');
    // The same under 2019: properties 0x4005, version 1, 10 BCD bytes; result 3 (not supported); XOR 0xfb.
    expect(hex(jt808TerminalResponse(IMEI, { serial: 0x2a, id: 0x8105 }, 3, 3))).toBe('7e0001400501000003563070424410130003002a810503fb7e');
    expect(hex(terminalBcd(IMEI))).toBe('00000356307042441013');
  });

  it('write the location body: flags, status, millionths of a degree, 1/10 km/h, BCD Beijing time, items 0x01, 0x30, 0x31', () => {
    // Status 0x0b: ACC on, positioned, west; 14:30:07 UTC is 22:30:07 in Beijing; 123,456 m is 1,235 tenths of a km.
    expect(jt808LocationBody(fix()).toString('hex')).toBe('000000000000000b0128849805e8a71008c001a9010f2405012230070104000004d3300117310109');
    // South, engine cut (bit 10), no satellites (not positioned).
    expect(jt808LocationBody(fix({ latitude: -1, longitude: 1, ignition: false, satellites: 0, outputs: { out1: true, out2: false } })).readUInt32BE(4)).toBe(0x404);
  });

  it('read platform messages: escapes undone, a bad checksum or noise skipped, a partial frame waited for', () => {
    const framed = jt808TerminalResponse('13912345678', { serial: 0x2a, id: 0x8105 }, 0, 0x7e7d);
    expect(readJt808PlatformMessage(framed)).toMatchObject({ consumed: framed.length, id: 0x0001, serial: 0x7e7d, terminal: '13912345678', body: Buffer.from('002a810500', 'hex') });
    expect(readJt808PlatformMessage(framed.subarray(0, 10))).toBeUndefined();
    const broken = Uint8Array.from(framed);
    broken[broken.length - 2] = broken[broken.length - 2]! ^ 1;
    expect(readJt808PlatformMessage(broken)).toMatchObject({ consumed: broken.length, id: -1 });
    expect(readJt808PlatformMessage(Uint8Array.of(0x0d, 0x0a, 0x7e))).toMatchObject({ consumed: 2, id: -1 });
  });
});

describe('simulated JT/T 808 terminal against the jt808 decoder', () => {
  it('registers, authenticates with the code the platform gave, and is known by its IMEI', () => {
    const session = newSession();
    const [registration] = decodeStream(jt808Dialect.login(IMEI), session);
    expect(registration!.deviceId).toBe(IMEI);
    const step = jt808Dialect.readLoginAnswer(registration!.reply!);
    expect(step).toMatchObject({ consumed: registration!.reply!.length, accepted: true });
    // The authentication carries the code from 0x8100 (the platform's choice) after its length byte.
    const [authentication] = decodeStream(step!.send!, session);
    const sent = readJt808PlatformMessage(step!.send!)!;
    const code = readJt808PlatformMessage(registration!.reply!)!.body.subarray(3);
    expect(sent.id).toBe(0x0102);
    expect(sent.body.subarray(1, 1 + code.length)).toEqual(code);
    expect(authentication!.deviceId).toBe(IMEI);
    expect(jt808Dialect.readLoginAnswer(authentication!.reply!)).toEqual({ consumed: authentication!.reply!.length, accepted: true });
  });

  it('reports fixes that decode to what was simulated, one as 0x0200 and several as 0x0704, each upload acknowledged', () => {
    const session = newSession();
    const fixes = [fix(), fix({ time: new Date('2024-05-01T16:00:01Z'), latitude: -33.4231, longitude: 70.6193, speedKmh: 0, heading: 0, ignition: false, satellites: 5, odometer: 200 })];
    for (const upload of [[fixes[0]!], fixes]) {
      const [frame] = decodeStream(jt808Dialect.packet(upload, IMEI), session);
      expect(frame!.deviceId).toBe(IMEI);
      expect(frame!.positions).toHaveLength(upload.length);
      for (const [i, f] of upload.entries()) {
        const p = frame!.positions[i]!;
        expect(p).toMatchObject({ fixTime: f.time, valid: true, latitude: f.latitude, longitude: f.longitude, altitude: 2240, speedKmh: f.speedKmh, heading: f.heading, satellites: f.satellites });
        expect(p.attributes).toMatchObject({ ignition: f.ignition, blocked: false, odometer: Math.round(f.odometer! / 100) * 100, rssi: 23 });
      }
      expect(jt808Dialect.readServerMessage(frame!.reply!)).toEqual({ kind: 'ack', consumed: frame!.reply!.length, records: Number.POSITIVE_INFINITY });
    }
  });

  it('reads the encoder\'s engine stop and text commands, obeys them, and answers with their serial', () => {
    const session = newSession();
    decodeStream(jt808Dialect.login(IMEI), session);
    const command = (type: 'engine_stop' | 'engine_resume' | 'custom', serial: number, text?: string) => {
      const message = jt808Dialect.readServerMessage(jt808Commands.encode({ type, params: {}, text }, { deviceId: IMEI, serial }));
      if (message?.kind !== 'command') throw new Error(`no command: ${JSON.stringify(message)}`);
      return message.command;
    };
    const stop = command('engine_stop', 42);
    expect(stop).toEqual({ text: 'terminal control 0xf0', messageId: 0x8105, serial: 42 });
    const obeyed = jt808Dialect.obey(stop, { out1: false, out2: false });
    expect(obeyed).toEqual({ outputs: { out1: true, out2: false }, answer: 'success' });
    const [answer] = decodeStream(jt808Dialect.answer(stop, obeyed.answer, IMEI), session);
    expect(answer).toMatchObject({ deviceId: IMEI, answer: { text: 'success', serial: 42 } });
    // The cut shows in the next fix's status (bit 10).
    const [after] = decodeStream(jt808Dialect.packet([fix({ outputs: obeyed.outputs })], IMEI), session);
    expect(after!.positions[0]!.attributes.blocked).toBe(true);

    expect(jt808Dialect.obey(command('engine_resume', 43), { out1: true, out2: false }).outputs.out1).toBe(false);
    const relay = command('custom', 44, 'Relay,1#');
    expect(relay).toEqual({ text: 'text Relay,1#', messageId: 0x8300, serial: 44 });
    expect(jt808Dialect.obey(relay, { out1: false, out2: false })).toEqual({ outputs: { out1: true, out2: false }, answer: 'success' });
    // A message the terminal does not handle is answered "not supported", which refuses the command.
    const unknown = { text: 'message 0x8801', messageId: 0x8801, serial: 45 };
    expect(jt808Dialect.obey(unknown, { out1: false, out2: false }).answer).toBe('not supported');
    const [refused] = decodeStream(jt808Dialect.answer(unknown, 'not supported', IMEI), session);
    expect(refused!.answer).toEqual({ text: 'not supported', serial: 45 });
  });
});
