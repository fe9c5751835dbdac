import { describe, expect, it } from 'vitest';
import { answerRefuses } from '../../../domain/commands/answer-outcome.ts';
import { CommandNotEncodable, type CommandType } from '../../../domain/commands/command-catalog.ts';
import { newSession } from '../../protocol.ts';
import { wialon } from './wialon.ts';
import { wialonCommands } from './wialon-commands.ts';
import { crc16 } from './wialon-fields.ts';

const encode = (type: CommandType, text?: string) =>
  Buffer.from(wialonCommands.encode({ type, params: {}, text }, { deviceId: '861230043907626', serial: 7 })).toString('latin1');

describe('wialon commands', () => {
  it('sends custom text as a message, #M#<text>\\r\\n', () => {
    expect(encode('custom', 'reboot')).toBe('#M#reboot\r\n');
    expect(encode('custom', 'L1=1')).toBe('#M#L1=1\r\n');
  });

  it('offers only custom: the protocol has no engine, siren or camera command', () => {
    expect(wialonCommands.types).toEqual(['custom']);
    for (const type of ['engine_stop', 'engine_resume', 'siren_on', 'siren_off', 'take_photo'] as const) expect(() => encode(type)).toThrow(CommandNotEncodable);
  });

  it('refuses text it cannot carry on one line', () => {
    expect(() => encode('custom')).toThrow(CommandNotEncodable);
    expect(() => encode('custom', 'reboot\r\n#M#again')).toThrow(/printable/);
    expect(() => encode('custom', 'x'.repeat(501))).toThrow(/at most 500/);
  });

  it('matches the device receipt (#AM#) and its #M# reply back as answers, and acknowledges the reply with #AM#1', () => {
    const session = { ...newSession(), deviceId: '861230043907626' };
    expect(wialon.decode(Buffer.from('#AM#1'), session).answer).toEqual({ text: '#AM#1' });
    // A receipt of 0 is the device refusing the message: the command fails rather than being acknowledged.
    const refused = wialon.decode(Buffer.from('#AM#0'), session).answer!;
    expect(refused).toEqual({ text: '#AM#0 (refused)' });
    expect(answerRefuses(refused.text)).toBe(true);
    expect(answerRefuses('#AM#1')).toBe(false);
    const answer = wialon.decode(Buffer.from('#M#Rebooting; ok'), session);
    expect(answer).toEqual({
      deviceId: '861230043907626',
      positions: [],
      reports: [{ attributes: { result: 'Rebooting; ok' } }],
      answer: { text: 'Rebooting; ok' },
      reply: Buffer.from('#AM#1\r\n'),
    });
  });

  it('strips a valid 2.0 checksum from the answer text', () => {
    const session = { ...newSession(), deviceId: '861230043907626' };
    const crc = crc16('done;').toString(16).toUpperCase().padStart(4, '0');
    expect(wialon.decode(Buffer.from(`#M#done;${crc}`), session).answer).toEqual({ text: 'done' });
    // A wrong one is no checksum: the text stays whole.
    expect(wialon.decode(Buffer.from('#M#done;0000'), session).answer).toEqual({ text: 'done;0000' });
  });

  it('frames its own output as one line the wialon framer cuts whole', () => {
    const bytes = wialonCommands.encode({ type: 'custom', params: {}, text: 'VER?' }, { deviceId: 'x', serial: 1 });
    const framed = wialon.nextFrame(bytes);
    if (framed.kind !== 'frame') throw new Error(`not one frame: ${framed.kind}`);
    expect(framed.consumed).toBe(bytes.length);
    expect(Buffer.from(framed.frame).toString()).toBe('#M#VER?');
  });
});
