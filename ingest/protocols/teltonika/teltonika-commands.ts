import { CommandNotEncodable, customText, integerParam, type CommandEncoder, type CommandRequest } from '../../../domain/commands/command-catalog.ts';
import { encodeTeltonikaCommand } from './teltonika-encoder.ts';

/** FMB devices have up to four digital outputs; the relay is wired to DOUT1, a siren usually to DOUT2. */
const OUTPUTS = 4;

/**
 * `setdigout` with one output set and the ones before it left as they are (`?`): `setdigout 1` sets
 * DOUT1, `setdigout ?1` DOUT2 without touching DOUT1.
 */
function setOutput(output: number, on: boolean): string {
  return `setdigout ${'?'.repeat(output - 1)}${on ? 1 : 0}`;
}

function outputOf(command: CommandRequest, fallback: number): number {
  return integerParam(command, 'output', fallback, 1, OUTPUTS, 'teltonika');
}

/**
 * Teltonika Codec 12 (GPRS commands, the SMS command set):
 * - `engine_stop` / `engine_resume`: `setdigout 1` / `setdigout 0` (params.output picks DOUT2..4);
 * - `siren_on` / `siren_off`: the same on DOUT2 by default (`setdigout ?1` / `setdigout ?0`);
 * - `custom`: any command text (`getinfo`, `getver`, `cpureset`...), up to 512 characters.
 * The device answers with a Codec 12 response holding its reply text (`DOUT1:1 Timeout:INFINITY`).
 */
export const teltonikaCommands: CommandEncoder = {
  protocol: 'teltonika',
  types: ['engine_stop', 'engine_resume', 'siren_on', 'siren_off', 'custom'],
  encode(command) {
    switch (command.type) {
      case 'engine_stop':
        return encodeTeltonikaCommand(setOutput(outputOf(command, 1), true));
      case 'engine_resume':
        return encodeTeltonikaCommand(setOutput(outputOf(command, 1), false));
      case 'siren_on':
        return encodeTeltonikaCommand(setOutput(outputOf(command, 2), true));
      case 'siren_off':
        return encodeTeltonikaCommand(setOutput(outputOf(command, 2), false));
      case 'custom':
        return encodeTeltonikaCommand(customText(command, 'teltonika', 512));
      default:
        throw new CommandNotEncodable(`teltonika cannot express ${command.type}`);
    }
  },
};
