import type { ByteReader } from '../../codec/byte-reader.ts';
import type { AttributeValue, DecodedReport } from '../../protocol.ts';
import { CAMERA } from './teltonika-camera.ts';

export const CODEC_12 = 0x0c;
export const CODEC_13 = 0x0d;
/** Codec 12 message type of a device's answer to a command. */
export const RESPONSE = 0x06;

/** Text when every byte is printable (line breaks allowed), otherwise hex, as command answers mix both. */
function resultText(bytes: Uint8Array): string {
  const printable = bytes.every((b) => b >= 32 || b === 0x0d || b === 0x0a);
  return printable ? Buffer.from(bytes).toString('latin1').trim() : Buffer.from(bytes).toString('hex');
}

/** A result may carry a driver identification: `GTSL|<state>|<…>|<…>|<driver id>|…` from tachograph/RFID readers. */
function resultAttributes(result: string): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = { result };
  if (result.startsWith('GTSL|')) {
    const driver = result.split('|')[4];
    if (driver) attributes.driverUniqueId = driver;
  }
  return attributes;
}

/**
 * A Codec 12 message: the device's answer to a command (type 0x06), other serial data, or a camera
 * message (type 0x0D), whose body teltonika-camera.ts reads against the session.
 */
export function readCodec12(r: ByteReader): { report: DecodedReport } | { camera: Uint8Array } {
  const type = r.u8();
  const length = r.u32();
  const body = r.slice(length);
  if (type === CAMERA) return { camera: body };
  return { report: { attributes: { type, ...resultAttributes(resultText(body)) } } };
}

/** A Codec 13 message: like Codec 12 with the device's timestamp in front of the data. */
export function readCodec13(r: ByteReader): DecodedReport {
  const type = r.u8();
  const length = r.u32() - 4;
  const time = new Date(r.u32() * 1000);
  return { time, attributes: { type, ...resultAttributes(resultText(r.slice(length))) } };
}
