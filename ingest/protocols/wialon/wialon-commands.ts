import { CommandNotEncodable, customText, type CommandEncoder } from '../../../domain/commands/command-catalog.ts';

/**
 * Wialon IPS has one way for the server to reach a device: a message, `#M#<text>\r\n`, which the
 * device acknowledges with `#AM#1` and may answer with its own `#M#<text>`. What the text does is up
 * to the firmware (`reboot`, `L1=1` for an output on some), and the protocol defines no engine,
 * siren or camera command, so only `custom` is offered: the text is sent as the message.
 */
export const wialonCommands: CommandEncoder = {
  protocol: 'wialon',
  types: ['custom'],
  encode(command) {
    if (command.type !== 'custom') throw new CommandNotEncodable(`wialon cannot express ${command.type}: the protocol only carries text messages (custom)`);
    const text = customText(command, 'wialon', 500);
    return Buffer.from(`#M#${text}\r\n`, 'latin1');
  },
};
