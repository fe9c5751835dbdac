import { CommandNotEncodable, customText, type CommandEncoder } from '../../../domain/commands/command-catalog.ts';
import { watchFrame } from './watch-decoder.ts';

function deviceId(id: string): string {
  if (!/^[0-9A-Za-z]{1,20}$/.test(id)) throw new CommandNotEncodable('watch: the device id must be letters or digits');
  return id;
}

/**
 * Watch server messages are frames like the device's own, `[CS*<id>*LLLL*<content>]` (the length is
 * the content's, 4 hex digits). The watches have no engine or output to cut: only `custom` is
 * expressed, its text being the content, such as `CR` (locate now), `SOS,<n1>,<n2>,<n3>`, `UPLOAD,600`,
 * `FIND`, `POWEROFF`. The manufacturer prefix is the one the watch itself sends on its connection
 * (`SG`, `3G`, `CS`…), or params.manufacturer when the command names one; `CS` when neither is known.
 */
export const watchCommands: CommandEncoder = {
  protocol: 'watch',
  types: ['custom'],
  encode(command, context) {
    if (command.type !== 'custom') throw new CommandNotEncodable(`watch cannot express ${command.type}`);
    const text = customText(command, 'watch', 500);
    if (/[[\]*]/.test(text)) throw new CommandNotEncodable('watch: `[`, `]` and `*` frame a message, so the text may not hold them');
    if (!/^[A-Za-z][0-9A-Za-z_]*(,|$)/.test(text)) throw new CommandNotEncodable('watch: a custom command starts with its command word, such as CR');
    const manufacturer = command.params.manufacturer ?? context.said?.watchManufacturer ?? 'CS';
    if (typeof manufacturer !== 'string' || !/^[0-9A-Z]{2}$/.test(manufacturer)) throw new CommandNotEncodable('watch: manufacturer must be two capitals or digits');
    return watchFrame(manufacturer, deviceId(context.deviceId), text);
  },
};
