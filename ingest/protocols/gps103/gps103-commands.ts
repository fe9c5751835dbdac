import { CommandNotEncodable, customText, type CommandEncoder, type CommandRequest } from '../../../domain/commands/command-catalog.ts';

const ascii = new TextEncoder();

/** The command names the device by the IMEI it reports (`imei:<digits>`). */
function imei(id: string): string {
  if (!/^\d{1,20}$/.test(id)) throw new CommandNotEncodable('gps103: the device id must be the digits of its IMEI');
  return id;
}

/** `**,imei:<imei>,<code>`: the form the devices take (and Traccar sends), with no terminator. */
function message(id: string, code: string): Uint8Array {
  return ascii.encode(`**,imei:${imei(id)},${code}`);
}

/**
 * Custom text is the part after the IMEI: a command letter and its arguments (`B` for one
 * position, `C,30s` for periodic reports, `A` to stop them, `L`/`M` to arm/disarm, `E` to clear
 * an SOS). It may not hold `;`, `*` or a line break, which end a message.
 */
function customBody(command: CommandRequest): string {
  const text = customText(command, 'gps103', 200);
  if (/[;*\r\n]/.test(text)) throw new CommandNotEncodable('gps103: `;`, `*` and line breaks end a message, so the text may not hold them');
  if (!/^[0-9A-Za-z]/.test(text)) throw new CommandNotEncodable('gps103: a custom command starts with its command letter or number, such as B');
  return text;
}

/**
 * GPS103 server messages, `**,imei:<imei>,<code>`:
 * - `engine_stop`: J (cut the fuel/power line), `**,imei:359586015829802,J`;
 * - `engine_resume`: K (restore it);
 * - `take_photo`: 160, answered by a `vt<count>` report and the picture in `vr` chunks (gps103-photo.ts);
 * - `custom`: any other code, such as B (one position now), C,30s (periodic), A, L, M, E.
 * The protocol has no siren command. The device answers J with a `jt` report, K with `kt`.
 */
export const gps103Commands: CommandEncoder = {
  protocol: 'gps103',
  types: ['engine_stop', 'engine_resume', 'take_photo', 'custom'],
  encode(command, context) {
    switch (command.type) {
      case 'engine_stop':
        return message(context.deviceId, 'J');
      case 'engine_resume':
        return message(context.deviceId, 'K');
      case 'take_photo':
        return message(context.deviceId, '160');
      case 'custom':
        return message(context.deviceId, customBody(command));
      default:
        throw new CommandNotEncodable(`gps103 cannot express ${command.type}`);
    }
  },
};
