import { CommandNotEncodable, customText, integerParam, type CommandEncoder, type CommandRequest } from '../../../domain/commands/command-catalog.ts';
import { meitrackCommand } from './meitrack-decoder.ts';

/** MVT/T-series devices have outputs A to E; the relay is wired to output A, a siren usually to B. */
const OUTPUTS = 5;

/** Flags a server may put in a command; the device repeats the flag in its answer. */
const FLAGS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * C01 output control: `C01,<speed>,<ABCDE>`, one digit per output (0 off, 1 on, 2 leave as it is),
 * speed 0 meaning "switch now, whatever the speed".
 */
function outputControl(command: CommandRequest, fallback: number, on: boolean): string {
  const output = integerParam(command, 'output', fallback, 1, OUTPUTS, 'meitrack');
  const digits = Array.from({ length: OUTPUTS }, (_, i) => (i === output - 1 ? (on ? '1' : '0') : '2')).join('');
  return `C01,0,${digits}`;
}

/**
 * Meitrack GPRS commands, `@@<flag><length>,<imei>,<content>*<checksum>\r\n`; the flag is the
 * context serial spread over A–Z, a–z (serial 0 gives `A`):
 * - `engine_stop` / `engine_resume`: `C01,0,12222` / `C01,0,02222` (params.output 1–5 picks another output);
 * - `siren_on` / `siren_off`: the same on output B by default, `C01,0,21222` / `C01,0,20222`;
 * - `take_photo`: `D03,<params.camera, default 1>,camera_picture.jpg`; the device answers D03 (the
 *   picture is under way), the decoder then asks for the picture chunk by chunk, and the command is
 *   acknowledged (`media <id>`) once the whole picture is stored;
 * - `custom`: the content between the IMEI and `*` (`A10`, `C02,0,<phone>,<text>`), up to 200 characters.
 */
export const meitrackCommands: CommandEncoder = {
  protocol: 'meitrack',
  types: ['engine_stop', 'engine_resume', 'siren_on', 'siren_off', 'take_photo', 'custom'],
  encode(command, { deviceId, serial }) {
    const flag = FLAGS[Math.abs(Math.trunc(serial)) % FLAGS.length]!;
    const send = (content: string) => meitrackCommand(flag, deviceId, content);
    switch (command.type) {
      case 'engine_stop':
        return send(outputControl(command, 1, true));
      case 'engine_resume':
        return send(outputControl(command, 1, false));
      case 'siren_on':
        return send(outputControl(command, 2, true));
      case 'siren_off':
        return send(outputControl(command, 2, false));
      case 'take_photo':
        return send(`D03,${integerParam(command, 'camera', 1, 1, 9, 'meitrack')},camera_picture.jpg`);
      case 'custom':
        return send(customText(command, 'meitrack', 200));
      default:
        throw new CommandNotEncodable(`meitrack cannot express ${command.type}`);
    }
  },
};
