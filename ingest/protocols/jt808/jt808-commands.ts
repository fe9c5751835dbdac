import { CommandNotEncodable, customText, integerParam, type CommandEncoder } from '../../../domain/commands/command-catalog.ts';
import { buildMessage, type SaidHeader } from './jt808-message.ts';

/** 0x8105 terminal control; 0xF0 / 0xF1 are the vendor command words for cutting and restoring fuel and power. */
const TERMINAL_CONTROL = 0x8105;
const CUT_FUEL = 0xf0;
const RESTORE_FUEL = 0xf1;
/** 0x8300 text message; flag bit 0 ("urgent") is what the firmwares that run SMS commands from the platform look for. */
const TEXT_MESSAGE = 0x8300;
const TEXT_AS_COMMAND = 0x01;
/** 0x8801 take picture immediately. */
const TAKE_PICTURE = 0x8801;
/** The 2019 header's version byte (version 1, the only one published). */
const VERSION_2019 = 1;

/**
 * The terminal number for the header, from the device id the terminal identified with (its number
 * with leading zeros dropped, jt808-message.ts): up to 12 digits fill the 2013 header's 6 BCD bytes,
 * 13 to 20 digits (an IMEI) the 2019 header's 10, which then carries the version byte. The header
 * the terminal itself sent on its connection wins: its number's bytes and edition exactly.
 */
export function terminalOf(deviceId: string, said?: Readonly<Record<string, unknown>>): { terminal: Uint8Array; version: number | undefined } {
  const header = saidHeader(said);
  if (header) return header;
  if (!/^\d{1,20}$/.test(deviceId)) throw new CommandNotEncodable(`jt808: device id ${deviceId} is not a terminal number`);
  const long = deviceId.length > 12;
  const digits = deviceId.padStart(long ? 20 : 12, '0');
  return { terminal: Uint8Array.from(Buffer.from(digits, 'hex')), version: long ? VERSION_2019 : undefined };
}

/** The header the terminal sent on this connection, when it sent one (a 2019 terminal with a short number, an IMEI packed as binary). */
function saidHeader(said: Readonly<Record<string, unknown>> | undefined): { terminal: Uint8Array; version: number | undefined } | undefined {
  const header = said?.jt808Header as Partial<SaidHeader> | undefined;
  if (typeof header?.terminal !== 'string' || !/^(?:[0-9a-f]{12}|[0-9a-f]{20})$/.test(header.terminal)) return undefined;
  const version = typeof header.version === 'number' ? header.version : undefined;
  if ((version === undefined) !== (header.terminal.length === 12)) return undefined;
  return { terminal: Uint8Array.from(Buffer.from(header.terminal, 'hex')), version };
}

/** 0x8801 body: channel, one picture, no interval, upload now, 640×480, quality 5 of 1 (best) to 10, mid brightness, contrast, saturation and hue. */
function takePictureBody(channel: number): Uint8Array {
  return Uint8Array.of(channel, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 5, 128, 64, 64, 128);
}

/**
 * JT/T 808 platform messages, each numbered with the command's serial so that the terminal's 0x0001
 * general response (or 0x0805 camera answer) names the command it answers:
 * - `engine_stop` / `engine_resume`: 0x8105 terminal control with the command word 0xF0 / 0xF1, as
 *   Traccar sends it by default. The standard has no fuel cut: 0x8500 vehicle control defines only
 *   the door lock in 2013 and typed controls in 2019, and text commands (`RELAY,1#`, `DYD#`) differ
 *   per maker, so those go as `custom`;
 * - `custom`: 0x8300 text message with flag 0x01, the form firmwares that take SMS commands from the
 *   platform read (Traccar's BSJ form); the 0x0001 answer acknowledges it;
 * - `take_photo`: 0x8801, one picture from camera `params.camera` (1 to 255, default 1), uploaded at
 *   once as 0x0801 packets (jt808-photo.ts); the picture completes the command.
 */
export const jt808Commands: CommandEncoder = {
  protocol: 'jt808',
  types: ['engine_stop', 'engine_resume', 'take_photo', 'custom'],
  answerSerial: (_command, serial) => serial & 0xffff,
  encode(command, { deviceId, serial, said }) {
    const to = terminalOf(deviceId, said);
    const number = serial & 0xffff;
    switch (command.type) {
      case 'engine_stop':
        return buildMessage(TERMINAL_CONTROL, to, number, Uint8Array.of(CUT_FUEL));
      case 'engine_resume':
        return buildMessage(TERMINAL_CONTROL, to, number, Uint8Array.of(RESTORE_FUEL));
      case 'take_photo':
        return buildMessage(TAKE_PICTURE, to, number, takePictureBody(integerParam(command, 'camera', 1, 1, 255, 'jt808')));
      case 'custom': {
        const text = customText(command, 'jt808', 1000);
        const body = new Uint8Array(1 + text.length);
        body[0] = TEXT_AS_COMMAND;
        body.set(Buffer.from(text, 'ascii'), 1);
        return buildMessage(TEXT_MESSAGE, to, number, body);
      }
      default:
        throw new CommandNotEncodable(`jt808 cannot express ${command.type}`);
    }
  },
};
