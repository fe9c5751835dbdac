import { CommandNotEncodable, customText, integerParam, type CommandEncoder, type CommandRequest } from '../../../domain/commands/command-catalog.ts';

/** The GL200's factory password; GV/GMT models ship with their own model name (`gv300`), so pass params.password. */
const DEFAULT_PASSWORD = 'gl200';

/** GV200/GV300/GV500 lay out four outputs in AT+GTOUT; the relay is wired to output 1, a siren usually to 2. */
const OUTPUTS = 4;

const ascii = new TextEncoder();

function password(command: CommandRequest): string {
  const value = command.params.password ?? DEFAULT_PASSWORD;
  if (typeof value !== 'string' || !/^[0-9A-Za-z_#-]{4,16}$/.test(value)) {
    throw new CommandNotEncodable('gl200: params.password must be 4 to 16 letters or digits');
  }
  return value;
}

/** The serial number field: four hex digits the device repeats in its `+ACK:GTOUT`. */
const serialField = (serial: number) => (Math.abs(Math.trunc(serial)) & 0xffff).toString(16).toUpperCase().padStart(4, '0');

/**
 * AT+GTOUT: for each of the four outputs `<status>,<duration>,<toggle times>`, then long operation,
 * DOS report and two reserved fields, then the serial number. Only the chosen output is written, as
 * a steady level (wave shape 1: duration and toggles 0; output 1 is latched and takes the status
 * alone); the other outputs' fields stay empty so the device leaves them as they are (Traccar's
 * encoder writes 0 there, which would also release a siren or relay on another output).
 */
function outputCommand(command: CommandRequest, fallback: number, on: boolean, serial: number): string {
  const output = integerParam(command, 'output', fallback, 1, OUTPUTS, 'gl200');
  const fields: string[] = new Array<string>(OUTPUTS * 3 + 4).fill('');
  const at = (output - 1) * 3;
  fields[at] = on ? '1' : '0';
  if (output > 1) fields[at + 1] = fields[at + 2] = '0';
  return `AT+GTOUT=${password(command)},${fields.join(',')},${serialField(serial)}$`;
}

/** Custom text is a whole @Track command (`AT+GTRTO=gv300,1,,,,,,0001`); the closing `$` is added when missing. */
function customCommand(command: CommandRequest): string {
  const text = customText(command, 'gl200', 480);
  const body = text.endsWith('$') ? text.slice(0, -1) : text;
  if (body.includes('$')) throw new CommandNotEncodable('gl200: `$` ends a command, so it may only close the text');
  return `${body}$`;
}

/**
 * Queclink @Track commands (`AT+GTxxx=<password>,...,<serial number>$`), answered by `+ACK:GTxxx`
 * with the same serial number:
 * - `engine_stop` / `engine_resume`: output 1 on / off, `AT+GTOUT=gl200,1,,,,,,,,,,,,,,,,0001$`
 *   (params.output 2–4 picks another output, params.password the device's password);
 * - `siren_on` / `siren_off`: output 2 by default, `AT+GTOUT=gl200,,,,1,0,0,,,,,,,,,,,0001$`;
 * - `custom`: any @Track command text, up to 480 characters.
 * Output control needs a model with outputs (GV/GMT series); the GL200 itself has none.
 */
export const gl200Commands: CommandEncoder = {
  protocol: 'gl200',
  types: ['engine_stop', 'engine_resume', 'siren_on', 'siren_off', 'custom'],
  // Output commands carry the serial's low 16 bits as the serial number +ACK repeats. A custom
  // command's serial number is whatever its text says, so its answer is not checked against one.
  answerSerial: (command, serial) => (command.type === 'custom' ? undefined : serial & 0xffff),
  encode(command, { serial }) {
    switch (command.type) {
      case 'engine_stop':
        return ascii.encode(outputCommand(command, 1, true, serial));
      case 'engine_resume':
        return ascii.encode(outputCommand(command, 1, false, serial));
      case 'siren_on':
        return ascii.encode(outputCommand(command, 2, true, serial));
      case 'siren_off':
        return ascii.encode(outputCommand(command, 2, false, serial));
      case 'custom':
        return ascii.encode(customCommand(command));
      default:
        throw new CommandNotEncodable(`gl200 cannot express ${command.type}`);
    }
  },
};
