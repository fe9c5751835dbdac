import { describe, expect, it } from 'vitest';
import { CommandNotEncodable, type CommandType } from '../../../domain/commands/command-catalog.ts';
import { newSession } from '../../protocol.ts';
import { jt808Commands } from './jt808-commands.ts';
import { jt808 } from './jt808.ts';

const hexOf = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const encode = (type: CommandType, serial: number, options: { deviceId?: string; text?: string; params?: Record<string, unknown> } = {}) =>
  hexOf(jt808Commands.encode({ type, params: options.params ?? {}, ...(options.text ? { text: options.text } : {}) }, { deviceId: options.deviceId ?? '13912345678', serial }));

/** A terminal message of terminal 013912345678, framed with its checksum. */
function terminalMessage(id: number, serial: number, body: string): Uint8Array {
  const message = Buffer.concat([Buffer.from([id >> 8, id & 0xff, 0, body.length / 2]), Buffer.from('013912345678', 'hex'), Buffer.from([serial >> 8, serial & 0xff]), Buffer.from(body, 'hex')]);
  let x = 0;
  for (const b of message) x ^= b;
  return Uint8Array.from(Buffer.concat([Buffer.from([0x7e]), message, Buffer.from([x, 0x7e])]));
}

describe('jt808 commands', () => {
  it('cuts and restores fuel with 0x8105 terminal control F0 / F1, numbered with the command serial', () => {
    expect(encode('engine_stop', 0x0102)).toBe('7e810500010139123456780102f0467e');
    // Serial 0x7e7d travels escaped.
    expect(encode('engine_resume', 0x12347e7d)).toBe('7e810500010139123456787d027d01f1477e');
  });

  it('writes the 2019 header (version 1, 10-byte number) for an IMEI-long terminal id', () => {
    expect(encode('engine_stop', 3, { deviceId: '866496077582164' })).toBe('7e8105400101000008664960775821640003f01a7e');
  });

  it('writes the header the terminal sent on its connection: a 2019 terminal with a short number keeps its edition', () => {
    const session = newSession();
    // A 2019 heartbeat (0x0002, version 1) from terminal 00000000013912345678: its id alone would give a 2013 header.
    const message = Buffer.from('0002400001' + '00000000013912345678' + '0005', 'hex');
    let x = 0;
    for (const b of message) x ^= b;
    jt808.decode(Uint8Array.from(Buffer.concat([Buffer.from([0x7e]), message, Buffer.from([x, 0x7e])])), session);
    const bytes = hexOf(jt808Commands.encode({ type: 'engine_stop', params: {} }, { deviceId: '13912345678', serial: 3, said: session.options }));
    expect(bytes.startsWith('7e81054001' + '01' + '00000000013912345678' + '0003f0')).toBe(true);
    expect(encode('engine_stop', 3)).toBe(encode('engine_stop', 3, { deviceId: '13912345678' }));
    expect(encode('engine_stop', 3).startsWith('7e81050001013912345678')).toBe(true);
  });

  it('sends custom text as a 0x8300 text message with flag 01, and a picture request as 0x8801', () => {
    expect(encode('custom', 5, { text: 'Test, Command, 123#' })).toBe('7e83000014013912345678000501546573742c20436f6d6d616e642c2031323323c17e');
    expect(encode('take_photo', 6, { params: { camera: 2 } })).toBe('7e8801000c0139123456780006020001000000020580404080b77e');
  });

  it('refuses what it cannot express: sirens, bad cameras, ids that are not terminal numbers, missing text', () => {
    for (const type of ['siren_on', 'siren_off'] as const) expect(() => encode(type, 1)).toThrow(CommandNotEncodable);
    expect(() => encode('take_photo', 1, { params: { camera: 0 } })).toThrow(CommandNotEncodable);
    expect(() => encode('engine_stop', 1, { deviceId: 'ABC123' })).toThrow(CommandNotEncodable);
    expect(() => encode('custom', 1)).toThrow(CommandNotEncodable);
  });

  it('matches answers by the 16-bit serial the terminal echoes in 0x0001', () => {
    expect(jt808Commands.answerSerial?.({ type: 'engine_stop', params: {} }, 0x1_0000_0102)).toBe(0x0102);
    const ok = jt808.decode(terminalMessage(0x0001, 9, '0102810500'), newSession());
    expect(ok.answer).toEqual({ text: 'success', serial: 0x0102 });
    expect(ok.reply).toBeUndefined();
    expect(ok.reports).toEqual([{ attributes: { result: 'success', answeredMessage: 0x8105 } }]);
    expect(jt808.decode(terminalMessage(0x0001, 10, '0103810503'), newSession()).answer).toEqual({ text: 'not supported', serial: 0x0103 });
  });

  it('takes the 0x0001 or 0x0805 answer to a picture request as progress: the picture completes the command', () => {
    expect(jt808.decode(terminalMessage(0x0001, 11, '0006880100'), newSession()).answer).toEqual({ text: 'success', serial: 6, progress: true });
    const camera = jt808.decode(terminalMessage(0x0805, 12, '0006' + '00' + '0001' + '0000002a'), newSession());
    expect(camera.answer).toEqual({ text: 'success', serial: 6, progress: true });
    expect(camera.reports?.[0]?.attributes).toEqual({ result: 'success', mediaIds: '42' });
    expect(jt808.decode(terminalMessage(0x0805, 13, '0006' + '02'), newSession()).answer).toEqual({ text: 'channel not supported', serial: 6 });
  });

  it('reads the 0x0500 vehicle control answer as the command answer with the position it carries', () => {
    const location = '00000000' + '00000403' + '0158cc00' + '06ca3a5c' + '0010' + '0000' + '0000' + '240131120000';
    const decoded = jt808.decode(terminalMessage(0x0500, 14, '0102' + location), newSession());
    expect(decoded.answer).toEqual({ text: 'vehicle control done', serial: 0x0102 });
    expect(decoded.positions[0]).toMatchObject({ latitude: 22.596608, attributes: { blocked: true, ignition: true, result: 'vehicle control done' } });
  });
});
