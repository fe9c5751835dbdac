import { describe, expect, it } from 'vitest';
import { CommandNotEncodable, type CommandRequest } from '../../../domain/commands/command-catalog.ts';
import { newSession } from '../../protocol.ts';
import { watch } from './watch.ts';
import { watchCommands } from './watch-commands.ts';

const encode = (command: CommandRequest, deviceId = '8800000015') => Buffer.from(watchCommands.encode(command, { deviceId, serial: 7 })).toString('latin1');
const custom = (text: string, params: CommandRequest['params'] = {}): CommandRequest => ({ type: 'custom', params, text });

describe('watch commands', () => {
  it('frames custom text as the content, with its length in hex', () => {
    expect(encode(custom('CR'))).toBe('[CS*8800000015*0002*CR]');
    expect(encode(custom('SOS,00000000000,11111111111,22222222222'))).toBe('[CS*8800000015*0027*SOS,00000000000,11111111111,22222222222]');
    expect(encode(custom('UPLOAD,600', { manufacturer: 'SG' }))).toBe('[SG*8800000015*000a*UPLOAD,600]');
  });

  it('frames in the prefix the watch itself sends on its connection, unless the command names one', () => {
    const session = newSession();
    watch.decode(Buffer.from('[3G*8800000015*0002*LK]'), session);
    const said = (command: CommandRequest) => Buffer.from(watchCommands.encode(command, { deviceId: '8800000015', serial: 7, said: session.options })).toString('latin1');
    expect(said(custom('CR'))).toBe('[3G*8800000015*0002*CR]');
    expect(said(custom('CR', { manufacturer: 'SG' }))).toBe('[SG*8800000015*0002*CR]');
  });

  it('refuses what it cannot express', () => {
    expect(watchCommands.types).toEqual(['custom']);
    for (const type of ['engine_stop', 'engine_resume', 'siren_on', 'siren_off', 'take_photo'] as const) {
      expect(() => encode({ type, params: {} })).toThrow(CommandNotEncodable);
    }
    expect(() => encode(custom('CR]'))).toThrow(/frame a message/);
    expect(() => encode(custom(',CR'))).toThrow(/command word/);
    expect(() => encode({ type: 'custom', params: {} })).toThrow(CommandNotEncodable);
    expect(() => encode(custom('CR', { manufacturer: 'sg' }))).toThrow(/manufacturer/);
    expect(() => encode(custom('CR'), '88 00')).toThrow(/device id/);
  });

  it('frames its own output the way the watch framer reads it, and reads the echo as the answer', () => {
    const bytes = watchCommands.encode(custom('CR'), { deviceId: '8800000015', serial: 7 });
    const framed = watch.nextFrame(bytes);
    if (framed.kind !== 'frame') throw new Error(`not one frame: ${framed.kind}`);
    expect(framed.consumed).toBe(bytes.length);
    expect(watch.decode(Buffer.from('[3G*8800000015*0002*CR]'), newSession()).answer).toEqual({ text: 'CR' });
  });
});
