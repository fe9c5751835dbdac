import { describe, expect, it } from 'vitest';
import { CommandNotEncodable } from '../../../domain/commands/command-catalog.ts';
import { buildFrame } from './gt06-message.ts';
import { gt06 } from './gt06.ts';
import { gt06Commands } from './gt06-commands.ts';

const encode = (type: Parameters<typeof gt06Commands.encode>[0]['type'], params: Record<string, unknown> = {}, text?: string, serial = 0x0102) =>
  gt06Commands.encode({ type, params, text }, { deviceId: '123456789012345', serial });

/** The command text and server flag of an 0x80 frame. */
function commandOf(frame: Uint8Array): { text: string; flag: number } {
  const length = frame[4]!;
  return { flag: Buffer.from(frame).readUInt32BE(5), text: Buffer.from(frame.subarray(9, 5 + length)).toString('ascii') };
}

describe('gt06 commands', () => {
  it('cuts and restores the relay with Relay,1# and Relay,0#, the serial as server flag', () => {
    const stop = encode('engine_stop');
    expect(commandOf(stop)).toEqual({ text: 'Relay,1#', flag: 0x0102 });
    expect([stop[3], stop[stop.length - 6], stop[stop.length - 5]]).toEqual([0x80, 0x01, 0x02]);
    expect(commandOf(encode('engine_resume', {}, undefined, 7))).toEqual({ text: 'Relay,0#', flag: 7 });
  });

  it('speaks DYD/HFYD with the password to older firmwares', () => {
    expect(commandOf(encode('engine_stop', { variant: 'dyd' })).text).toBe('DYD,000000#');
    expect(commandOf(encode('engine_resume', { variant: 'dyd', password: '123456' })).text).toBe('HFYD,123456#');
    expect(() => encode('engine_stop', { variant: 'dyd', password: '12' })).toThrow(/six digits/);
    expect(() => encode('engine_stop', { variant: 'other' })).toThrow(/relay or dyd/);
  });

  it('sends custom text, and refuses what GT06 cannot express', () => {
    expect(commandOf(encode('custom', {}, 'WHERE#')).text).toBe('WHERE#');
    for (const type of ['siren_on', 'siren_off', 'take_photo'] as const) expect(() => encode(type)).toThrow(CommandNotEncodable);
  });

  it('reads the device\'s 0x21 answer to a command as its result text', () => {
    const answer = Buffer.concat([Buffer.from([0, 0, 0x01, 0x02, 0x01]), Buffer.from('Cut off the fuel supply: Success!')]);
    const frame = buildFrame(0x21, 9, answer, true);
    const decoded = gt06.decode(frame, { deviceId: '123456789012345', options: {} });
    expect(decoded.reports?.[0]?.attributes.result ?? decoded.positions[0]?.attributes.result).toBe('Cut off the fuel supply: Success!');
    // The server flag it echoes tells which command it answers.
    expect(decoded.answer).toEqual({ text: 'Cut off the fuel supply: Success!', serial: 0x0102 });
  });

  it('reads the 0x15 text answer with its server flag, and an ICCID report as no answer', () => {
    const text = (flag: number, body: string) => {
      const content = Buffer.alloc(1 + 4 + body.length);
      content[0] = 4 + body.length;
      content.writeUInt32BE(flag, 1);
      content.write(body, 5, 'ascii');
      return gt06.decode(buildFrame(0x15, 3, content), { deviceId: '123456789012345', options: {} });
    };
    expect(text(0xabcdef01, 'Restore fuel supply: Success!').answer).toEqual({ text: 'Restore fuel supply: Success!', serial: 0xabcdef01 });
    const iccid = text(1, '<ICCID:89860000000000000000>');
    expect(iccid.answer).toBeUndefined();
    expect(iccid.reports?.[0]?.attributes.iccid).toBe('89860000000000000000');
  });
});
