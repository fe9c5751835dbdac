import { CommandNotEncodable, customText, integerParam, type CommandEncoder } from '../../../domain/commands/command-catalog.ts';
import { serverPacket } from './ruptela-crc.ts';

/** Server command ids are the device's answer id plus 100. */
export const CMD_SMS_VIA_GPRS = 108;
export const CMD_SET_IO = 117;
export const CMD_FILES = 137;

function setIo(output: number, value: number): Uint8Array {
  const content = new Uint8Array(8);
  const view = new DataView(content.buffer);
  view.setUint32(0, output);
  view.setUint32(4, value);
  return serverPacket(CMD_SET_IO, content);
}

/**
 * Ruptela server packets (length, id, content, CRC16/Kermit):
 * - `engine_stop`: set IO (117) of digital output `params.output` (default 1, the immobiliser relay) to 1;
 * - `engine_resume`: the same output to 0; the device answers with packet 17 and a 1-byte result;
 * - `take_photo`: files (137), subcommand 1, every picture of `params.camera` (default 0); it comes back as
 *   file packets (37), each chunk answered by a request for the next;
 * - `custom`: SMS-via-GPRS (108) with the SMS command text; the device answers with packet 7 and text.
 */
export const ruptelaCommands: CommandEncoder = {
  protocol: 'ruptela',
  types: ['engine_stop', 'engine_resume', 'take_photo', 'custom'],
  encode(command) {
    switch (command.type) {
      case 'engine_stop':
        return setIo(integerParam(command, 'output', 1, 1, 4, 'ruptela'), 1);
      case 'engine_resume':
        return setIo(integerParam(command, 'output', 1, 1, 4, 'ruptela'), 0);
      case 'take_photo': {
        // Files, subcommand 1: send the pictures of camera `params.camera` (0 = any) taken between two times (all of them).
        const content = new Uint8Array(10);
        const view = new DataView(content.buffer);
        content[0] = 1;
        content[1] = integerParam(command, 'camera', 0, 0, 255, 'ruptela');
        view.setUint32(2, 0);
        view.setUint32(6, 0x7fffffff);
        return serverPacket(CMD_FILES, content);
      }
      case 'custom':
        return serverPacket(CMD_SMS_VIA_GPRS, new TextEncoder().encode(customText(command, 'ruptela', 160)));
      default:
        throw new CommandNotEncodable(`ruptela cannot express ${command.type}`);
    }
  },
};
