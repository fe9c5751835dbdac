import { CommandNotEncodable, customText, type CommandEncoder, type CommandRequest } from '../../../domain/commands/command-catalog.ts';
import { encodeCommand } from './gt06-encoder.ts';

/** The factory password of Concox devices, which their `DYD`/`HFYD` commands carry. */
const DEFAULT_PASSWORD = '000000';

/**
 * The relay command of a GT06 model: most firmwares take `Relay,1#` / `Relay,0#`; older GT06N/TR06
 * firmwares take the oil-and-power cut `DYD,<password>#` / restore `HFYD,<password>#`
 * (params.variant `dyd`, params.password, default 000000).
 */
function relayText(command: CommandRequest, on: boolean): string {
  const variant = command.params.variant ?? 'relay';
  if (variant === 'relay') return on ? 'Relay,1#' : 'Relay,0#';
  if (variant === 'dyd') {
    const password = command.params.password ?? DEFAULT_PASSWORD;
    if (typeof password !== 'string' || !/^[0-9]{6}$/.test(password)) throw new CommandNotEncodable('gt06: params.password must be six digits');
    return on ? `DYD,${password}#` : `HFYD,${password}#`;
  }
  throw new CommandNotEncodable('gt06: params.variant must be relay or dyd');
}

/**
 * GT06/Concox online commands (message 0x80): the text in the frame with a 4-byte server flag the
 * device echoes in its 0x15 / 0x21 answer, so an answer is matched to its command by that flag.
 * - `engine_stop` / `engine_resume`: see relayText;
 * - `custom`: any command text ending in `#` as in the device's SMS manual (`WHERE#`, `STATUS#`).
 */
export const gt06Commands: CommandEncoder = {
  protocol: 'gt06',
  types: ['engine_stop', 'engine_resume', 'custom'],
  // The whole serial travels as the 4-byte server flag, which the 0x15 / 0x21 answer repeats.
  answerSerial: (_command, serial) => serial >>> 0,
  encode(command, { serial }) {
    switch (command.type) {
      case 'engine_stop':
        return encodeCommand(relayText(command, true), serial, serial);
      case 'engine_resume':
        return encodeCommand(relayText(command, false), serial, serial);
      case 'custom':
        return encodeCommand(customText(command, 'gt06', 240), serial, serial);
      default:
        throw new CommandNotEncodable(`gt06 cannot express ${command.type}`);
    }
  },
};
