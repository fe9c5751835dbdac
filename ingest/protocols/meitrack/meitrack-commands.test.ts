import { describe, expect, it } from 'vitest';
import { CommandNotEncodable, type CommandType } from '../../../domain/commands/command-catalog.ts';
import { meitrack } from './meitrack.ts';
import { meitrackCommands } from './meitrack-commands.ts';

const IMEI = '123456789012345';

const encode = (type: CommandType, params: Record<string, unknown> = {}, text?: string, serial = 0, deviceId = IMEI) =>
  Buffer.from(meitrackCommands.encode({ type, params, text }, { deviceId, serial })).toString('latin1');

const answer = (text: string) => {
  const bytes = Buffer.from(text, 'latin1');
  const framed = meitrack.nextFrame(bytes);
  if (framed.kind !== 'frame') throw new Error(`not one frame: ${framed.kind}`);
  expect(framed.consumed).toBe(bytes.length);
  return meitrack.decode(framed.frame, { options: {} });
};

describe('meitrack commands', () => {
  // Traccar's MeitrackProtocolEncoderTest vectors (flag A, device 123456789012345), sent here as
  // take_photo and as custom content.
  it('matches Traccar\'s encoder-test frames', () => {
    expect(encode('custom', {}, 'A10')).toBe('@@A25,123456789012345,A10*58\r\n');
    expect(encode('take_photo')).toBe('@@A46,123456789012345,D03,1,camera_picture.jpg*1C\r\n');
    expect(encode('custom', {}, 'C02,0,15360853789,Meitrack')).toBe('@@A48,123456789012345,C02,0,15360853789,Meitrack*8B\r\n');
  });

  // The output-control example of Meitrack's GPRS protocol manual, flag M, and the device's answer.
  it('matches the manual\'s C01 example and reads its OK answer as the result', () => {
    expect(encode('custom', {}, 'C01,20,10122', 12, '353358017784062')).toBe('@@M34,353358017784062,C01,20,10122*18\r\n');
    const decoded = answer('$$M28,353358017784062,C01,OK*F9\r\n');
    expect(decoded.positions).toEqual([]);
    expect(decoded.reports?.[0]?.attributes.result).toBe('C01,OK');
    expect(decoded.answer).toEqual({ text: 'C01,OK' });
  });

  it('switches output A for the engine and output B for the siren, leaving the others as they are', () => {
    expect(encode('engine_stop')).toBe('@@A33,123456789012345,C01,0,12222*DA\r\n');
    expect(encode('engine_resume')).toBe('@@A33,123456789012345,C01,0,02222*D9\r\n');
    expect(encode('siren_on')).toBe('@@A33,123456789012345,C01,0,21222*DA\r\n');
    expect(encode('siren_off')).toBe('@@A33,123456789012345,C01,0,20222*D9\r\n');
    expect(encode('siren_on', { output: 4 })).toBe('@@A33,123456789012345,C01,0,22212*DA\r\n');
    expect(() => encode('engine_stop', { output: 6 })).toThrow(/params.output must be a whole number from 1 to 5/);
  });

  it('spreads the serial over the flag letters', () => {
    expect(encode('engine_stop', {}, undefined, 27)).toBe('@@b33,123456789012345,C01,0,12222*FB\r\n');
    expect(encode('engine_stop', {}, undefined, 52)).toBe('@@A33,123456789012345,C01,0,12222*DA\r\n');
  });

  it('asks another camera for a photo, and the D03 answer starts the download', () => {
    expect(encode('take_photo', { camera: 2 })).toBe('@@A46,123456789012345,D03,2,camera_picture.jpg*1D\r\n');
    expect(() => encode('take_photo', { camera: 0 })).toThrow(CommandNotEncodable);
    const decoded = answer('$$D28,353358017784062,D03,OK*F3\r\n');
    expect(decoded.answer).toEqual({ text: 'D03,OK', progress: true });
    expect(Buffer.from(decoded.reply!).toString('latin1')).toMatch(/^@@O\d+,353358017784062,D00,camera_picture\.jpg,0\*[0-9A-F]{2}\r\n$/);
  });

  it('refuses a custom command without text', () => {
    expect(() => encode('custom')).toThrow(CommandNotEncodable);
    expect(() => encode('custom', {}, 'A10\r\n')).toThrow(/printable/);
  });
});
