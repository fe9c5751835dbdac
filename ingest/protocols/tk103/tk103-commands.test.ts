import { describe, expect, it } from 'vitest';
import { CommandNotEncodable, type CommandType } from '../../../domain/commands/command-catalog.ts';
import { newSession } from '../../protocol.ts';
import { tk103 } from './tk103.ts';
import { tk103Commands } from './tk103-commands.ts';

const encode = (type: CommandType, text?: string, deviceId = '088047365460') =>
  Buffer.from(tk103Commands.encode({ type, params: {}, text }, { deviceId, serial: 7 })).toString('latin1');

describe('tk103 commands', () => {
  it('cuts and restores the engine with AV01', () => {
    expect(encode('engine_stop')).toBe('(088047365460AV010)');
    expect(encode('engine_resume')).toBe('(088047365460AV011)');
  });

  // Traccar's Tk103ProtocolEncoderTest expects these frames for device 123456789012345.
  it('matches Traccar\'s encoder-test frames', () => {
    const imei = '123456789012345';
    expect(encode('engine_stop', undefined, imei)).toBe('(123456789012345AV010)');
    expect(encode('custom', 'AA00', imei)).toBe('(123456789012345AA00)');
    expect(encode('custom', 'AP00', imei)).toBe('(123456789012345AP00)');
    expect(encode('custom', 'AR00003C0000', imei)).toBe('(123456789012345AR00003C0000)');
  });

  it('frames custom text as a command word and body, and refuses text that would break the frame', () => {
    expect(encode('custom', 'AP07')).toBe('(088047365460AP07)');
    expect(() => encode('custom', 'AP00)(088047365460AV010')).toThrow(/`\(` and `\)`/);
    expect(() => encode('custom', 'hello')).toThrow(/command word/);
    expect(() => encode('custom')).toThrow(CommandNotEncodable);
  });

  it('refuses what it cannot express', () => {
    expect(tk103Commands.types).toEqual(['engine_stop', 'engine_resume', 'custom']);
    for (const type of ['siren_on', 'siren_off', 'take_photo'] as const) expect(() => encode(type)).toThrow(CommandNotEncodable);
    expect(() => encode('engine_stop', undefined, '0880 47365460')).toThrow(/device id/);
    expect(() => encode('engine_stop', undefined, '')).toThrow(/device id/);
  });

  it('reads BV01, the answer to AV01, and a ZC03 result as answers', () => {
    const decode = (text: string) => tk103.decode(Buffer.from(text, 'latin1'), newSession());
    expect(decode('(088047365460BV010)')).toMatchObject({ deviceId: '088047365460', positions: [], answer: { text: 'BV010' } });
    expect(decode('(088047365460BV010)').reports?.[0]?.attributes.result).toBe('BV010');
    expect(decode('(864768011069660,ZC03,250425,123045,$Oil cut off OK$)').answer).toEqual({ text: 'Oil cut off OK' });
    // A fix is no answer.
    expect(decode('(088047365460BR00160219A2233.0464N11356.2452E000.0070211000.0000000000L00000000)').answer).toBeUndefined();
  });

  // What the server sends is a frame this repo's own framer and decoder read back: one frame, the
  // same id and command word (the decoder reads no AV01 body, so no position or report).
  it('frames its own output the way the tk103 framer and decoder read it', () => {
    const bytes = tk103Commands.encode({ type: 'engine_stop', params: {} }, { deviceId: '088047365460', serial: 7 });
    const framed = tk103.nextFrame(bytes);
    if (framed.kind !== 'frame') throw new Error(`not one frame: ${framed.kind}`);
    expect(framed.consumed).toBe(bytes.length);
    expect(tk103.decode(framed.frame, newSession())).toEqual({ deviceId: '088047365460', positions: [] });
  });
});
