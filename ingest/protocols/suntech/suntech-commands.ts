import { CommandNotEncodable, customText, type CommandEncoder } from '../../../domain/commands/command-catalog.ts';

const ascii = new TextEncoder();

function deviceId(id: string): string {
  if (!/^[0-9A-Za-z]{1,20}$/.test(id)) throw new CommandNotEncodable('suntech: the device id must be 1–20 letters or digits');
  return id;
}

/**
 * Suntech server commands in the SA200/ST300 form, `SA200CMD;<id>;02;<action>\r`, which the ST
 * legacy firmwares accept whatever their own model prefix:
 * - `engine_stop`: `Enable1`, output 1 (the immobiliser relay) on;
 * - `engine_resume`: `Disable1`, output 1 off;
 * - `custom`: the whole message without its `\r`, e.g. `SA200GTR;<id>;02;` or universal `CMD;<id>;04;01`.
 * The device answers `ST300CMD;Res;<id>;02;Enable1` (or, universal firmwares, `RES;<id>;…`), read back as the answer.
 */
export const suntechCommands: CommandEncoder = {
  protocol: 'suntech',
  types: ['engine_stop', 'engine_resume', 'custom'],
  encode(command, context) {
    const id = deviceId(context.deviceId);
    switch (command.type) {
      case 'engine_stop':
        return ascii.encode(`SA200CMD;${id};02;Enable1\r`);
      case 'engine_resume':
        return ascii.encode(`SA200CMD;${id};02;Disable1\r`);
      case 'custom': {
        const text = customText(command, 'suntech', 200);
        if (!/^[A-Z0-9]{3,10};/.test(text)) throw new CommandNotEncodable('suntech: a custom command is a whole message, such as SA200GTR;<id>;02;');
        return ascii.encode(`${text}\r`);
      }
      default:
        throw new CommandNotEncodable(`suntech cannot express ${command.type}`);
    }
  },
};
