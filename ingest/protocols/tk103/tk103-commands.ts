import { CommandNotEncodable, customText, type CommandEncoder, type CommandRequest } from '../../../domain/commands/command-catalog.ts';

const ascii = new TextEncoder();

/** The id is glued to the command word, so it must be the exact id the device logged in with. */
function deviceId(id: string): string {
  if (!/^[0-9A-Za-z]{1,20}$/.test(id)) throw new CommandNotEncodable('tk103: the device id must be letters or digits');
  return id;
}

/** `(<id><command word><body>)`: the parentheses frame the message; nothing else is added. */
function message(id: string, body: string): Uint8Array {
  return ascii.encode(`(${deviceId(id)}${body})`);
}

/** Custom text is a command word and its body, `AP00` or `AR00003C0000`; it may not hold a parenthesis. */
function customBody(command: CommandRequest): string {
  const text = customText(command, 'tk103', 200);
  if (/[()]/.test(text)) throw new CommandNotEncodable('tk103: `(` and `)` frame a message, so the text may not hold them');
  if (!/^[A-Z]{2}[0-9A-Z]{2}/.test(text)) throw new CommandNotEncodable('tk103: a custom command starts with its command word, such as AP00');
  return text;
}

/**
 * TK103 server messages in the compact form (`(<id><command word><body>)`):
 * - `engine_stop`: AV01 (oil/power line) with 0, cut, `(088047365460AV010)`;
 * - `engine_resume`: AV01 with 1, restore, `(088047365460AV011)`;
 * - `custom`: a command word and its body, `(088047365460AP00)`.
 * The protocol numbers no outputs and has no siren or camera command, so those types are left out.
 */
export const tk103Commands: CommandEncoder = {
  protocol: 'tk103',
  types: ['engine_stop', 'engine_resume', 'custom'],
  encode(command, context) {
    switch (command.type) {
      case 'engine_stop':
        return message(context.deviceId, 'AV010');
      case 'engine_resume':
        return message(context.deviceId, 'AV011');
      case 'custom':
        return message(context.deviceId, customBody(command));
      default:
        throw new CommandNotEncodable(`tk103 cannot express ${command.type}`);
    }
  },
};
