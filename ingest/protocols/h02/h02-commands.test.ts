import { describe, expect, it } from 'vitest';
import { CommandNotEncodable, type CommandType } from '../../../domain/commands/command-catalog.ts';
import { newSession } from '../../protocol.ts';
import { h02 } from './h02.ts';
import { h02Commands } from './h02-commands.ts';

const TIME = '2026-11-23T13:03:05Z';

const encode = (type: CommandType, params: Record<string, unknown> = { time: TIME }, text?: string, deviceId = '4210051415') =>
  Buffer.from(h02Commands.encode({ type, params, text }, { deviceId, serial: 1 })).toString('latin1');

describe('h02 commands', () => {
  it('cuts and restores the engine with S20 and the UTC time of the command', () => {
    expect(encode('engine_stop')).toBe('*HQ,4210051415,S20,130305,1,1#');
    expect(encode('engine_resume')).toBe('*HQ,4210051415,S20,130305,1,0#');
    expect(encode('engine_stop', { time: new Date(Date.UTC(2026, 0, 2, 0, 0, 9)) })).toBe('*HQ,4210051415,S20,000009,1,1#');
    // A time with an offset is written in UTC.
    expect(encode('engine_stop', { time: '2026-11-23T23:59:59+02:00' })).toBe('*HQ,4210051415,S20,215959,1,1#');
  });

  it('takes the current UTC time when none is given', () => {
    const before = Date.now();
    const frame = encode('engine_stop', {});
    const field = /^\*HQ,4210051415,S20,(\d{6}),1,1#$/.exec(frame)![1]!;
    const possible = new Set([before, Date.now()].map((t) => new Date(t).toISOString().slice(11, 19).replace(/:/g, '')));
    expect(possible).toContain(field);
  });

  // Traccar's H02ProtocolEncoderTest expects these frames for engine stop and resume at 01:02:03
  // (device 123456789012345); the same requests here give the same bytes.
  it('matches Traccar\'s encoder-test frames', () => {
    const at = { time: '2026-11-23T01:02:03Z' };
    expect(encode('engine_stop', at, undefined, '123456789012345')).toBe('*HQ,123456789012345,S20,010203,1,1#');
    expect(encode('engine_resume', at, undefined, '123456789012345')).toBe('*HQ,123456789012345,S20,010203,1,0#');
    expect(encode('custom', at, 'S71,22,10', '123456789012345')).toBe('*HQ,123456789012345,S71,010203,22,10#');
  });

  it('frames custom text with the time after the command name', () => {
    expect(encode('custom', { time: TIME }, 'SCF,0,0')).toBe('*HQ,4210051415,SCF,130305,0,0#');
    expect(encode('custom', { time: TIME }, 'R1')).toBe('*HQ,4210051415,R1,130305#');
    expect(() => encode('custom', { time: TIME }, 'S20,1,1#*HQ,1,S20')).toThrow(/`\*` and `#`/);
    expect(() => encode('custom', { time: TIME }, 's20,1,1')).toThrow(/name/);
    expect(() => encode('custom', { time: TIME })).toThrow(CommandNotEncodable);
  });

  it('refuses what it cannot express', () => {
    expect(h02Commands.types).toEqual(['engine_stop', 'engine_resume', 'custom']);
    for (const type of ['siren_on', 'siren_off', 'take_photo'] as const) expect(() => encode(type)).toThrow(CommandNotEncodable);
    expect(() => encode('engine_stop', { time: 'yesterday' })).toThrow(/params.time/);
    expect(() => encode('engine_stop', { time: 130305 })).toThrow(/params.time/);
    expect(() => encode('engine_stop', { time: TIME }, undefined, '42100,51415')).toThrow(/device id/);
  });

  it('reads a V4 confirmation without a fix as the answer too', () => {
    const decoded = h02.decode(Buffer.from('*HQ,4210051415,V4,S20,130305#', 'latin1'), newSession());
    expect(decoded).toMatchObject({ deviceId: '4210051415', positions: [], answer: { text: 'S20,130305' } });
  });

  // The V4 confirmation of the H02 protocol document: the command, the time it carried, then the
  // device's time and fix (frame from Traccar's H02ProtocolDecoderTest, id and maker code ours).
  it('reads the device\'s V4 confirmation as the result, with the command time it echoes', () => {
    expect(encode('engine_stop')).toContain(',S20,130305,');
    const bytes = Buffer.from('*HQ,4210051415,V4,S20,DONE,130305,050316,A,2212.8745,N,11346.6574,E,14.28,028,220902,F7FFFBFF#\r\n', 'latin1');
    const framed = h02.nextFrame(bytes);
    if (framed.kind !== 'frame') throw new Error(`not one frame: ${framed.kind}`);
    expect(framed.consumed).toBe(bytes.length - 2);
    const decoded = h02.decode(framed.frame, newSession());
    expect(decoded.deviceId).toBe('4210051415');
    expect(decoded.positions).toHaveLength(1);
    expect(decoded.positions[0]!.attributes.result).toBe('S20,DONE,130305');
    expect(decoded.answer).toEqual({ text: 'S20,DONE,130305' });
    expect(decoded.positions[0]!.fixTime).toEqual(new Date(Date.UTC(2002, 8, 22, 5, 3, 16)));
  });
});
