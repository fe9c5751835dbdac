import { describe, expect, it } from 'vitest';
import { gps103Commands } from '../ingest/protocols/gps103/gps103-commands.ts';
import { gps103 } from '../ingest/protocols/gps103/gps103.ts';
import { cutFrame } from '../ingest/frame-cutter.ts';
import { newSession, type DecodedFrame, type DecoderSession } from '../ingest/protocol.ts';
import { gps103Answer, gps103Login, gps103Report, readGps103ServerMessage } from './gps103-packets.ts';
import type { SimulatedFix } from './teltonika-packets.ts';
import { gps103Dialect } from './tracker-dialect.ts';

const IMEI = '359586015829802';
const bytes = (s: string) => Buffer.from(s, 'latin1');
const text = (b: Uint8Array) => Buffer.from(b).toString('latin1');

/** Every frame of a stream, decoded in order as one connection would. */
function decodeStream(stream: Uint8Array, session: DecoderSession = newSession()): DecodedFrame[] {
  const out: DecodedFrame[] = [];
  let rest = stream;
  for (;;) {
    const next = cutFrame(gps103, rest);
    if (next.kind === 'incomplete' || next.kind === 'invalid') break;
    rest = rest.subarray(next.consumed);
    if (next.kind === 'frame') out.push(gps103.decode(next.frame, session));
  }
  expect(rest.length).toBe(0);
  return out;
}

const fix = (over: Partial<SimulatedFix> = {}): SimulatedFix => ({
  time: new Date('2024-05-01T14:30:07.250Z'), latitude: 19.4326, longitude: -99.1332, altitude: 2240, speedKmh: 42, heading: 271.5, satellites: 9, ignition: true, ...over,
});

describe('simulated GPS103 packets', () => {
  it('write the login, reports and heartbeat byte for byte as a TK103B does', () => {
    expect(text(gps103Login(IMEI))).toBe('##,imei:359586015829802,A;');
    // Local time in Mexico City (UTC-6) beside the UTC time; 19.4326° = 19°25.9560′, 99.1332° = 99°07.9920′; 42 km/h = 22.68 kn.
    expect(gps103Report(IMEI, fix())).toBe('imei:359586015829802,tracker,240501083007,,F,143007.250,A,1925.9560,N,09907.9920,W,22.68,271.50,2240.0,1,0,,,;');
    expect(gps103Report(IMEI, fix({ latitude: -33.4231, longitude: 70.6193, satellites: 0, ignition: false, altitude: undefined, fuelPercent: 51.5 })))
      .toBe('imei:359586015829802,tracker,240501083007,,F,143007.250,V,3325.3860,S,07037.1580,E,22.68,271.50,,0,0,51.50%,,;');
    // Minutes that round up to 60 carry into the degree.
    expect(gps103Report(IMEI, fix({ latitude: 10.9999999 }))).toContain(',1100.0000,N,');
    expect(text(gps103Answer(IMEI, 'jt', new Date('2024-05-01T00:10:00Z')))).toBe('imei:359586015829802,jt,240430181000,,L,,,,,,,,;');
  });

  it('decode back to what was simulated: login LOAD, each report a position, the heartbeat ON', () => {
    const session = newSession();
    const [login] = decodeStream(gps103Dialect.login(IMEI), session);
    expect(login).toMatchObject({ deviceId: IMEI, positions: [] });
    expect(gps103Dialect.readLoginAnswer(login!.reply!)).toEqual({ consumed: 4, accepted: true });

    // Near local midnight: the local date is the day before the UTC date.
    const fixes = [fix(), fix({ time: new Date('2024-05-02T05:59:58Z'), latitude: -0.5, longitude: 0.25, speedKmh: 0, heading: 0, ignition: false })];
    const frames = decodeStream(gps103Dialect.packet(fixes, IMEI), session);
    expect(frames).toHaveLength(3);
    for (const [i, f] of fixes.entries()) {
      const [p] = frames[i]!.positions;
      expect(frames[i]!.reply).toBeUndefined();
      expect(p).toMatchObject({ fixTime: new Date(Math.floor(f.time.getTime() / 1000) * 1000), valid: true, heading: f.heading, attributes: { ignition: f.ignition, door: false } });
      expect(p!.latitude).toBeCloseTo(f.latitude, 5);
      expect(p!.longitude).toBeCloseTo(f.longitude, 5);
      expect(p!.speedKmh).toBeCloseTo(f.speedKmh, 1);
    }
    expect(frames[0]!.positions[0]!.altitude).toBe(2240);
    const heartbeat = frames[2]!;
    expect(heartbeat).toMatchObject({ deviceId: IMEI, positions: [] });
    // ON acknowledges every line sent before it.
    expect(gps103Dialect.readServerMessage(heartbeat.reply!)).toEqual({ kind: 'ack', consumed: 2, records: Number.POSITIVE_INFINITY });
  });

  it('read the encoder\'s commands, obey J and K, and answer in the lines the decoder matches back', () => {
    const encode = (type: 'engine_stop' | 'engine_resume') => gps103Commands.encode({ type, params: {} }, { deviceId: IMEI, serial: 1 });
    const stop = gps103Dialect.readServerMessage(encode('engine_stop'));
    expect(stop).toEqual({ kind: 'command', consumed: 25, command: { text: 'J' } });
    if (stop?.kind !== 'command') throw new Error('no command');
    const obeyed = gps103Dialect.obey(stop.command, { out1: false, out2: false });
    expect(obeyed).toEqual({ outputs: { out1: true, out2: false }, answer: 'jt' });
    const [answer] = decodeStream(gps103Dialect.answer(stop.command, obeyed.answer, IMEI));
    expect(answer).toMatchObject({ deviceId: IMEI, answer: { text: 'jt' }, positions: [], reports: [{ attributes: { result: 'jt' } }] });

    const resume = gps103Dialect.readServerMessage(encode('engine_resume'));
    if (resume?.kind !== 'command') throw new Error('no command');
    expect(gps103Dialect.obey(resume.command, { out1: true, out2: true })).toEqual({ outputs: { out1: false, out2: true }, answer: 'kt' });
    // A code the device acts on without a word: no answer at all.
    expect(gps103Dialect.obey({ text: 'B' }, { out1: false, out2: false }).answer).toBe('');
    expect(gps103Dialect.answer({ text: 'B' }, '', IMEI)).toHaveLength(0);
  });

  it('cut the server\'s stream: commands without a terminator, glued answers, partial messages, noise', () => {
    const read = (s: string) => readGps103ServerMessage(bytes(s));
    expect(read('**,imei:359586015829802,J')).toEqual({ kind: 'command', consumed: 25, imei: IMEI, code: 'J' });
    expect(read('**,imei:359586015829802,C,30s**,imei:359586015829802,K')).toMatchObject({ kind: 'command', consumed: 29, code: 'C,30s' });
    expect(read('**,imei:359586015829802,E;ON')).toMatchObject({ kind: 'command', consumed: 26, code: 'E' });
    expect(read('**,imei:359586015829802,JON')).toMatchObject({ kind: 'command', consumed: 25, code: 'J' });
    expect(read('ONON')).toEqual({ kind: 'on', consumed: 2 });
    expect(read('LOAD')).toEqual({ kind: 'load', consumed: 4 });
    for (const partial of ['', 'O', 'LOA', '*', '**,im', '**,imei:3595', '**,imei:359586015829802,']) expect(read(partial)).toBeUndefined();
    expect(read('\r\nON')).toEqual({ kind: 'noise', consumed: 2 });
    expect(read('**x')).toEqual({ kind: 'noise', consumed: 2 });
    // A login answer other than LOAD is a refusal; an incomplete one is waited for.
    expect(gps103Dialect.readLoginAnswer(bytes('LO'))).toBeUndefined();
    expect(gps103Dialect.readLoginAnswer(bytes('ON'))).toEqual({ consumed: 0, accepted: false });
  });
});
