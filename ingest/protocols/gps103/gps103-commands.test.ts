import { describe, expect, it } from 'vitest';
import { CommandNotEncodable, type CommandType } from '../../../domain/commands/command-catalog.ts';
import { newSession } from '../../protocol.ts';
import { gps103 } from './gps103.ts';
import { gps103Commands } from './gps103-commands.ts';

const encode = (type: CommandType, text?: string, deviceId = '359586015829802') =>
  Buffer.from(gps103Commands.encode({ type, params: {}, text }, { deviceId, serial: 7 })).toString('latin1');

describe('gps103 commands', () => {
  it('cuts and restores the engine with J and K', () => {
    expect(encode('engine_stop')).toBe('**,imei:359586015829802,J');
    expect(encode('engine_resume')).toBe('**,imei:359586015829802,K');
  });

  // Traccar's Gps103ProtocolEncoderTest expects these forms for device 123456789012345.
  it('matches Traccar\'s encoder forms', () => {
    const imei = '123456789012345';
    expect(encode('custom', 'B', imei)).toBe('**,imei:123456789012345,B');
    expect(encode('custom', 'C,01m', imei)).toBe('**,imei:123456789012345,C,01m');
    expect(encode('custom', 'A', imei)).toBe('**,imei:123456789012345,A');
  });

  it('refuses custom text that would end the message, and what it cannot express', () => {
    expect(() => encode('custom', 'B;**,imei:1,J')).toThrow(/end a message/);
    expect(() => encode('custom', 'B\r\n')).toThrow(CommandNotEncodable);
    expect(() => encode('custom', ',B')).toThrow(/command letter/);
    expect(() => encode('custom')).toThrow(CommandNotEncodable);
    expect(gps103Commands.types).toEqual(['engine_stop', 'engine_resume', 'custom']);
    for (const type of ['siren_on', 'siren_off', 'take_photo'] as const) expect(() => encode(type)).toThrow(CommandNotEncodable);
    expect(() => encode('engine_stop', undefined, 'ABC123')).toThrow(/IMEI/);
    expect(() => encode('engine_stop', undefined, '')).toThrow(/IMEI/);
  });

  it('is not read back as a device message by the gps103 decoder', () => {
    const bytes = gps103Commands.encode({ type: 'engine_stop', params: {} }, { deviceId: '359586015829802', serial: 7 });
    expect(() => gps103.decode(bytes, newSession())).toThrow();
  });
});
