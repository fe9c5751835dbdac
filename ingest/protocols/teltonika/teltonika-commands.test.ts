import { describe, expect, it } from 'vitest';
import { CommandNotEncodable } from '../../../domain/commands/command-catalog.ts';
import { crc16Ibm } from '../../codec/crc16.ts';
import { newSession } from '../../protocol.ts';
import { teltonika } from './teltonika.ts';
import { teltonikaCommands } from './teltonika-commands.ts';

const encode = (type: Parameters<typeof teltonikaCommands.encode>[0]['type'], params: Record<string, unknown> = {}, text?: string) =>
  Buffer.from(teltonikaCommands.encode({ type, params, text }, { deviceId: '356307042441013', serial: 1 })).toString('hex');

/** A Codec 12 command frame around `text`, with the CRC the frame must end with. */
const frame = (text: string, crc: string) =>
  `00000000${(text.length + 8).toString(16).padStart(8, '0')}0c0105${text.length.toString(16).padStart(8, '0')}${Buffer.from(text).toString('hex')}01${crc}`;

describe('teltonika commands', () => {
  it('frames a custom command exactly as Traccar\'s encoder test expects for getinfo', () => {
    expect(encode('custom', {}, 'getinfo')).toBe('000000000000000f0c010500000007676574696e666f0100004312');
  });

  it('cuts and restores the engine on DOUT1, or on the output given', () => {
    expect(encode('engine_stop')).toBe(frame('setdigout 1', '000087a2'));
    expect(Buffer.from(encode('engine_resume'), 'hex').subarray(15, 26).toString()).toBe('setdigout 0');
    expect(Buffer.from(encode('engine_stop', { output: 3 }), 'hex').subarray(15, 28).toString()).toBe('setdigout ??1');
  });

  it('drives the siren on DOUT2 without touching the relay', () => {
    expect(Buffer.from(encode('siren_on'), 'hex').subarray(15, 27).toString()).toBe('setdigout ?1');
    expect(Buffer.from(encode('siren_off'), 'hex').subarray(15, 27).toString()).toBe('setdigout ?0');
  });

  // A Codec 12 message of type `type` (6: the device's response) holding `text`, with its CRC.
  const codec12 = (type: number, text: string) => {
    const body = Buffer.concat([Buffer.from([0x0c, 1, type]), Buffer.alloc(4), Buffer.from(text), Buffer.from([1])]);
    body.writeUInt32BE(text.length, 3);
    const out = Buffer.alloc(8 + body.length + 4);
    out.writeUInt32BE(body.length, 4);
    body.copy(out, 8);
    out.writeUInt32BE(crc16Ibm(out, 8, 8 + body.length), 8 + body.length);
    return out;
  };
  const decodeLoggedIn = (frame: Uint8Array) => {
    const session = newSession();
    teltonika.decode(Buffer.from('000f333536333037303432343431303133', 'hex'), session);
    return teltonika.decode(frame, session);
  };

  // The answer FMB firmwares give to setdigout: each output's new state and timeout.
  it('reads the Codec 12 response as the answer to the command, unacknowledged as the protocol wants', () => {
    const decoded = decodeLoggedIn(codec12(0x06, 'DOUT1:1 Timeout:INFINITY DOUT2:IGNORED'));
    expect(decoded.answer).toEqual({ text: 'DOUT1:1 Timeout:INFINITY DOUT2:IGNORED' });
    expect(decoded.reports?.[0]?.attributes).toMatchObject({ type: 6, result: 'DOUT1:1 Timeout:INFINITY DOUT2:IGNORED' });
    expect(decoded.reply).toBeUndefined();
    // A command frame echoed back (type 5) is no answer.
    expect(decodeLoggedIn(codec12(0x05, 'getinfo')).answer).toBeUndefined();
  });

  it('refuses what it cannot express', () => {
    expect(() => encode('take_photo')).toThrow(CommandNotEncodable);
    expect(() => encode('engine_stop', { output: 5 })).toThrow(/params.output must be a whole number from 1 to 4/);
    expect(() => encode('custom')).toThrow(/needs its text/);
    expect(() => encode('custom', {}, 'getinfo\r\n')).toThrow(/printable ASCII/);
    expect(teltonikaCommands.types).not.toContain('take_photo');
  });
});
