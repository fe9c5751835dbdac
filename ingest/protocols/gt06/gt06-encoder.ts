import { buildFrame } from './gt06-message.ts';

/** Language word closing an online command: 0x0002 asks the tracker to answer in English. */
const ENGLISH = 0x0002;

/**
 * Builds an 0x80 online command (e.g. 'Relay,1#'): command length (server flag + text), a 4-byte
 * server flag the device echoes in its 0x15/0x21 answer, the ASCII text and the language word.
 * Long texts switch to the 0x7979 frame, whose length field is two bytes.
 */
export function encodeCommand(text: string, serial: number, serverFlag = 0): Uint8Array {
  const command = Buffer.from(text, 'ascii');
  if (command.length + 4 > 0xff) throw new RangeError(`gt06: command of ${command.length} bytes is longer than the 251 a command length byte allows`);
  const content = new Uint8Array(1 + 4 + command.length + 2);
  content[0] = 4 + command.length;
  new DataView(content.buffer).setUint32(1, serverFlag >>> 0);
  content.set(command, 5);
  content[5 + command.length] = ENGLISH >> 8;
  content[6 + command.length] = ENGLISH & 0xff;
  const extended = content.length + 5 > 0xff;
  return buildFrame(0x80, serial & 0xffff, content, extended);
}
