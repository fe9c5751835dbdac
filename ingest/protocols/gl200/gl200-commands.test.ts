import { describe, expect, it } from 'vitest';
import { CommandNotEncodable, type CommandType } from '../../../domain/commands/command-catalog.ts';
import { gl200 } from './gl200.ts';
import { gl200Commands } from './gl200-commands.ts';

const encode = (type: CommandType, params: Record<string, unknown> = {}, text?: string, serial = 1) =>
  Buffer.from(gl200Commands.encode({ type, params, text }, { deviceId: '135790246811220', serial })).toString('latin1');

describe('gl200 commands', () => {
  it('drives output 1 for the engine, leaving the other outputs alone', () => {
    expect(encode('engine_stop')).toBe('AT+GTOUT=gl200,1,,,,,,,,,,,,,,,,0001$');
    expect(encode('engine_resume')).toBe('AT+GTOUT=gl200,0,,,,,,,,,,,,,,,,0001$');
  });

  it('drives output 2 for the siren, or the output and password given', () => {
    expect(encode('siren_on')).toBe('AT+GTOUT=gl200,,,,1,0,0,,,,,,,,,,,0001$');
    expect(encode('siren_off')).toBe('AT+GTOUT=gl200,,,,0,0,0,,,,,,,,,,,0001$');
    expect(encode('siren_on', { output: 4, password: 'gv300' }, undefined, 0x1a2b)).toBe('AT+GTOUT=gv300,,,,,,,,,,1,0,0,,,,,1A2B$');
    expect(() => encode('siren_on', { output: 5 })).toThrow(/params.output must be a whole number from 1 to 4/);
    expect(() => encode('engine_stop', { password: 'a,b' })).toThrow(/password/);
  });

  // Traccar's Gl200ProtocolEncoder has no test; its engine_stop frame and the GV200/GV300 manual
  // examples give the field layout: 16 fields between the password and the serial number.
  it('lays out AT+GTOUT as the Queclink manuals and Traccar do', () => {
    const fieldCount = (frame: string) => frame.split(',').length;
    for (const reference of [
      'AT+GTOUT=,1,,,0,0,0,0,0,0,0,,,,,,,FFFF$', // Traccar, empty password
      'AT+GTOUT=gv200,1,0,0,0,0,0,0,5,1,0,8,3,,,,,0005$', // GV200 manual
      'AT+GTOUT=gv300,1,,,0,0,0,0,5,1,,,,,,,,0004$', // GV300 manual
    ]) {
      expect(fieldCount(encode('engine_stop'))).toBe(fieldCount(reference));
    }
    // Output 3 sits where the GV300 example sets it (0,5,1 there; a steady level here).
    expect(encode('siren_on', { output: 3, password: 'gv300' }, undefined, 4).split(',').slice(7, 10)).toEqual(['1', '0', '0']);
  });

  it('frames custom text with the closing $', () => {
    expect(encode('custom', {}, 'AT+GTRTO=gl200,1,,,,,,FFFF')).toBe('AT+GTRTO=gl200,1,,,,,,FFFF$');
    expect(encode('custom', {}, 'AT+GTRTO=gl200,1,,,,,,FFFF$')).toBe('AT+GTRTO=gl200,1,,,,,,FFFF$');
    expect(() => encode('custom', {}, 'AT+GTRTO=a$AT+GTOUT=b')).toThrow(/\$/);
    expect(() => encode('custom')).toThrow(CommandNotEncodable);
    expect(() => encode('take_photo')).toThrow(CommandNotEncodable);
  });

  // The acknowledgement example of the GMT100 manual, for a command sent with serial number 0004.
  it('reads the device\'s +ACK:GTOUT as the result, with the serial number it repeats', () => {
    expect(encode('engine_stop', {}, undefined, 4).endsWith(',0004$')).toBe(true);
    const bytes = Buffer.from('+ACK:GTOUT,080100,135790246811220,,0004,20090214093254,11F0$', 'latin1');
    const framed = gl200.nextFrame(bytes);
    if (framed.kind !== 'frame') throw new Error(`not one frame: ${framed.kind}`);
    expect(framed.consumed).toBe(bytes.length);
    const decoded = gl200.decode(framed.frame, { options: {} });
    expect(decoded.positions).toEqual([]);
    expect(decoded.reports?.[0]?.attributes).toEqual({ type: 'OUT', result: 'GTOUT,0004' });
    expect(decoded.answer).toEqual({ text: 'GTOUT,0004', serial: 4 });
    expect(decoded.reports?.[0]?.time).toEqual(new Date(Date.UTC(2009, 1, 14, 9, 32, 54)));
  });
});
