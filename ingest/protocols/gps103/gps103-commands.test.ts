import { describe, expect, it } from 'vitest';
import { answerRefuses } from '../../../domain/commands/answer-outcome.ts';
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

  it('asks for a picture with 160', () => {
    expect(encode('take_photo')).toBe('**,imei:359586015829802,160');
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
    expect(gps103Commands.types).toEqual(['engine_stop', 'engine_resume', 'take_photo', 'custom']);
    for (const type of ['siren_on', 'siren_off'] as const) expect(() => encode(type)).toThrow(CommandNotEncodable);
    expect(() => encode('engine_stop', undefined, 'ABC123')).toThrow(/IMEI/);
    expect(() => encode('engine_stop', undefined, '')).toThrow(/IMEI/);
  });

  it('reads the device\'s jt/kt reports as the answers to J and K, and lf as a refusal', () => {
    const decode = (s: string) => gps103.decode(Buffer.from(s, 'latin1'), newSession());
    const stopped = decode('imei:868166054696190,jt,231226105556,,F,105556.000,A,3518.59664,N,04658.22381,E,0.00,13.26;');
    expect(stopped.answer).toEqual({ text: 'jt' });
    expect(stopped.positions[0]!.attributes).toEqual({ result: 'jt' });
    expect(decode('imei:868166054696190,kt,231226105916,,F,105916.000,A,3518.59694,N,04658.22350,E,0.00,13.26;').answer).toEqual({ text: 'kt' });
    // The refusal reads as one, so the command fails (answer-outcome.ts) instead of being acknowledged.
    const refused = decode('imei:868166054696190,lf,231226095912,,F,095912.000,A,3518.59827,N,04700.04798,E,0.00,196.17;');
    expect(refused.answer).toEqual({ text: 'lf (refused)' });
    expect(answerRefuses(refused.answer!.text)).toBe(true);
    expect(answerRefuses(stopped.answer!.text)).toBe(false);
    expect(refused.positions[0]!.attributes).toEqual({ result: 'lf' });
    // A periodic report or an alarm is no answer.
    expect(decode('imei:868166054696190,tracker,231226095912,,F,095912.000,A,3518.59827,N,04700.04798,E,0.00,196.17;').answer).toBeUndefined();
    expect(decode('imei:868166054696190,help me,231226095912,,F,095912.000,A,3518.59827,N,04700.04798,E,0.00,196.17;').answer).toBeUndefined();
  });
});
