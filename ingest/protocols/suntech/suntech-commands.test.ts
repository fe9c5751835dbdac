import { describe, expect, it } from 'vitest';
import { CommandNotEncodable, type CommandType } from '../../../domain/commands/command-catalog.ts';
import { newSession } from '../../protocol.ts';
import { suntech } from './suntech.ts';
import { suntechCommands } from './suntech-commands.ts';

const encode = (type: CommandType, text?: string, deviceId = '205174410') =>
  Buffer.from(suntechCommands.encode({ type, params: {}, text }, { deviceId, serial: 7 })).toString('latin1');

describe('suntech commands', () => {
  it('drives output 1 for the engine with SA200CMD Enable1/Disable1', () => {
    expect(encode('engine_stop')).toBe('SA200CMD;205174410;02;Enable1\r');
    expect(encode('engine_resume')).toBe('SA200CMD;205174410;02;Disable1\r');
  });

  it('sends custom text as a whole message and refuses what is not one', () => {
    expect(encode('custom', 'SA200GTR;205174410;02;')).toBe('SA200GTR;205174410;02;\r');
    expect(encode('custom', 'CMD;0560001616;04;01')).toBe('CMD;0560001616;04;01\r');
    expect(() => encode('custom', 'hello')).toThrow(/whole message/);
    expect(() => encode('custom')).toThrow(CommandNotEncodable);
  });

  it('refuses what it cannot express', () => {
    expect(suntechCommands.types).toEqual(['engine_stop', 'engine_resume', 'custom']);
    for (const type of ['siren_on', 'siren_off', 'take_photo'] as const) expect(() => encode(type)).toThrow(CommandNotEncodable);
    expect(() => encode('engine_stop', undefined, '2051 74410')).toThrow(/device id/);
    expect(() => encode('engine_stop', undefined, '205174410;02;Enable2')).toThrow(/device id/);
  });

  it('reads RES and echoed CMD messages back as answers', () => {
    const decode = (s: string) => suntech.decode(Buffer.from(s, 'latin1'), newSession());
    expect(decode('RES;4309999001;04;02;TEST')).toMatchObject({ deviceId: '4309999001', positions: [], answer: { text: '04;02;TEST' } });
    expect(decode('RES;4309999001;04;02;TEST').reports).toEqual([{ attributes: { result: '04;02;TEST' } }]);
    expect(decode('ST300CMD;205174410;02;Enable1').answer).toEqual({ text: '02;Enable1' });
    expect(decode('ST300CMD;Res;205174410;02;Enable1')).toMatchObject({ deviceId: '205174410', answer: { text: '02;Enable1' } });
    expect(decode('ST300STT;100850000;01;010;20081017;07:41:56;00100;+37.478519;+126.886819;000.012;000.00;9;1;0;15.30;001100;1;0').answer).toBeUndefined();
  });

  it('frames its own output as one message the framer cuts whole', () => {
    const bytes = suntechCommands.encode({ type: 'engine_stop', params: {} }, { deviceId: '205174410', serial: 7 });
    const framed = suntech.nextFrame(bytes);
    if (framed.kind !== 'frame') throw new Error(`not one frame: ${framed.kind}`);
    expect(framed.consumed).toBe(bytes.length);
    expect(suntech.decode(framed.frame, newSession())).toMatchObject({ deviceId: '205174410', answer: { text: '02;Enable1' } });
  });
});
