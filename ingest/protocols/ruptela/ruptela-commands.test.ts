import { describe, expect, it } from 'vitest';
import { CommandNotEncodable, type CommandType } from '../../../domain/commands/command-catalog.ts';
import { newSession } from '../../protocol.ts';
import { crc16Kermit } from './ruptela-crc.ts';
import { ruptela } from './ruptela.ts';
import { ruptelaCommands } from './ruptela-commands.ts';

const encode = (type: CommandType, params: Record<string, unknown> = {}, text?: string) =>
  Buffer.from(ruptelaCommands.encode({ type, params, text }, { deviceId: '863071016796572', serial: 7 })).toString('hex');

/** Length, body, CRC16/Kermit of the body: what every server packet must be. */
const framed = (body: string): string => {
  const bytes = Buffer.from(body, 'hex');
  return bytes.length.toString(16).padStart(4, '0') + body + crc16Kermit(bytes).toString(16).padStart(4, '0');
};

/** A device packet for the answers: length, IMEI, id, payload, CRC. */
function devicePacket(type: number, payload: Buffer): Uint8Array {
  const body = Buffer.concat([Buffer.alloc(8), Buffer.from([type]), payload]);
  body.writeBigUInt64BE(863071016796572n, 0);
  const out = Buffer.alloc(body.length + 4);
  out.writeUInt16BE(body.length, 0);
  body.copy(out, 2);
  out.writeUInt16BE(crc16Kermit(body), body.length + 2);
  return Uint8Array.from(out);
}

describe('ruptela commands', () => {
  it('cuts and restores the engine by setting output 1 with set IO (117)', () => {
    expect(encode('engine_stop')).toBe(framed('75' + '00000001' + '00000001'));
    expect(encode('engine_resume')).toBe(framed('75' + '00000001' + '00000000'));
    expect(encode('engine_stop', { output: 2 })).toBe(framed('75' + '00000002' + '00000001'));
    expect(encode('engine_stop')).toBe('0009750000000100000001' + crc16Kermit(Buffer.from('750000000100000001', 'hex')).toString(16).padStart(4, '0'));
  });

  it('sends custom text as SMS via GPRS (108) and asks for pictures with files (137)', () => {
    expect(encode('custom', {}, 'getio')).toBe(framed('6c' + Buffer.from('getio').toString('hex')));
    expect(encode('take_photo')).toBe(framed('89' + '01' + '00' + '00000000' + '7fffffff'));
    expect(encode('take_photo', { camera: 2 })).toBe(framed('89' + '01' + '02' + '00000000' + '7fffffff'));
  });

  it('refuses what it cannot express', () => {
    expect(ruptelaCommands.types).toEqual(['engine_stop', 'engine_resume', 'take_photo', 'custom']);
    for (const type of ['siren_on', 'siren_off'] as const) expect(() => encode(type)).toThrow(CommandNotEncodable);
    expect(() => encode('custom')).toThrow(CommandNotEncodable);
    expect(() => encode('custom', {}, 'x'.repeat(161))).toThrow(CommandNotEncodable);
    expect(() => encode('engine_stop', { output: 9 })).toThrow(/output/);
  });

  it('matches the device\'s answers back: set IO (17) and SMS via GPRS (7)', () => {
    expect(ruptela.decode(devicePacket(17, Buffer.from([1])), newSession())).toMatchObject({ deviceId: '863071016796572', positions: [], answer: { text: '1' } });
    const text = ruptela.decode(devicePacket(7, Buffer.from('DOUT1=1,DOUT2=0\r\n')), newSession());
    expect(text.answer).toEqual({ text: 'DOUT1=1,DOUT2=0' });
    expect(text.reports?.[0]?.attributes.result).toBe('DOUT1=1,DOUT2=0');
  });

  it('frames what it sends with a length the ruptela framer agrees with', () => {
    for (const type of ['engine_stop', 'engine_resume', 'take_photo'] as const) {
      const bytes = Buffer.from(encode(type), 'hex');
      expect(bytes.readUInt16BE(0)).toBe(bytes.length - 4);
    }
  });
});
