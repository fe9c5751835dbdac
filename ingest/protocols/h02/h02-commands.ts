import { CommandNotEncodable, customText, type CommandEncoder, type CommandRequest } from '../../../domain/commands/command-catalog.ts';

/** The maker code most H02 firmwares accept from a server; the device checks it before obeying. */
const MAKER = 'HQ';

const ascii = new TextEncoder();

/**
 * The command's time field, `HHMMSS` in UTC: from params.time (an ISO 8601 string or a Date) when
 * given, so a retry carries the same bytes, else the current time. The device echoes it in its V4
 * answer, which ties the answer to the command.
 */
function commandTime(command: CommandRequest): string {
  const given = command.params.time;
  if (given !== undefined && typeof given !== 'string' && !(given instanceof Date)) {
    throw new CommandNotEncodable('h02: params.time must be an ISO 8601 time');
  }
  const at = given === undefined ? new Date() : new Date(given);
  if (Number.isNaN(at.getTime())) throw new CommandNotEncodable('h02: params.time must be an ISO 8601 time');
  return at.toISOString().slice(11, 19).replace(/:/g, '');
}

function deviceId(id: string): string {
  if (!/^\d{1,20}$/.test(id)) throw new CommandNotEncodable('h02: the device id must be digits');
  return id;
}

/** `*HQ,<id>,<name>,<HHMMSS>[,<arg>…]#`: every server command puts its time right after its name. */
function sentence(id: string, name: string, time: string, args: readonly string[]): Uint8Array {
  return ascii.encode(`*${MAKER},${deviceId(id)},${[name, time, ...args].join(',')}#`);
}

/**
 * Custom text is a command name and its arguments, `S71,22,10`; the time goes in after the name.
 * `*` and `#` open and close a sentence, so the text may not hold them.
 */
function customSentence(command: CommandRequest, id: string): Uint8Array {
  const text = customText(command, 'h02', 200);
  if (/[*#]/.test(text)) throw new CommandNotEncodable('h02: `*` and `#` frame a sentence, so the text may not hold them');
  const [name, ...args] = text.split(',');
  if (!/^[A-Z][A-Z0-9]*$/.test(name!)) throw new CommandNotEncodable('h02: a custom command starts with its name, such as S71');
  return sentence(id, name!, commandTime(command), args);
}

/**
 * H02 server commands (`*HQ,<id>,<command>,<HHMMSS>,<args>#`), answered by a V4 sentence that
 * echoes the command and its time before the device's fix:
 * - `engine_stop`: S20 with `1,1` (cut fuel/power), `*HQ,4210051415,S20,130305,1,1#`;
 * - `engine_resume`: S20 with `1,0` (restore), `*HQ,4210051415,S20,130305,1,0#`;
 * - `custom`: a command name and its arguments, the time inserted after the name.
 * The protocol numbers no outputs and has no siren or camera command, so those types are left out.
 */
export const h02Commands: CommandEncoder = {
  protocol: 'h02',
  types: ['engine_stop', 'engine_resume', 'custom'],
  encode(command, context) {
    switch (command.type) {
      case 'engine_stop':
        return sentence(context.deviceId, 'S20', commandTime(command), ['1', '1']);
      case 'engine_resume':
        return sentence(context.deviceId, 'S20', commandTime(command), ['1', '0']);
      case 'custom':
        return customSentence(command, context.deviceId);
      default:
        throw new CommandNotEncodable(`h02 cannot express ${command.type}`);
    }
  },
};
