import { MalformedFrameError } from '../../malformed-frame-error.ts';

/**
 * The envelope every Queclink @Track text message shares:
 *   `+RESP:GTxxx,<protocol version>,<imei>,<device name>,...,<send time>,<count>$`
 * `+BUFF:` marks a report the device buffered while offline, `+ACK:` an answer to a command.
 * The oldest firmware (GL100 era) omits the protocol version, so the IMEI is the first field.
 */

export interface Gl200Message {
  kind: 'RESP' | 'BUFF' | 'ACK';
  /** Three letters after `GT`: FRI, IGN, INF, HBD, ... */
  type: string;
  /** Protocol version (model and firmware in hex), absent on the oldest firmware. */
  version?: string;
  imei: string;
  /** All comma-separated fields, the `+RESP:GTxxx` tag included, trailing `$` removed. */
  fields: string[];
  /** Index of the first field after the IMEI. */
  body: number;
  /** The device's send time (yyyyMMddHHmmss) when the message ends with one before the count. */
  sendTime?: Date;
  /** The last field: a hex message counter the device expects echoed in acknowledgements. */
  count: string;
}

const HEAD = /^\+(RESP|BUFF|ACK):GT([A-Z0-9]{3})$/;
const IMEI = /^(?:\d{15}|[0-9A-F]{14})$/;
const VERSION = /^[0-9A-F]{6}(?:[0-9A-F]{4})?$/;
const DATE_TIME = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)$/;

/** yyyyMMddHHmmss (UTC) or undefined when the field is not one. */
export function gl200Time(field: string | undefined): Date | undefined {
  const m = field === undefined ? null : DATE_TIME.exec(field);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return undefined;
  return new Date(Date.UTC(y, mo - 1, d, h, mi, s));
}

/** A decimal field, or undefined when empty or not a number. */
export function num(field: string | undefined): number | undefined {
  return field !== undefined && /^-?\d+(?:\.\d+)?$/.test(field) ? Number(field) : undefined;
}

/** A hex field, or undefined when empty or not hex. */
export function hexNum(field: string | undefined): number | undefined {
  return field !== undefined && /^[0-9A-Fa-f]{1,8}$/.test(field) ? parseInt(field, 16) : undefined;
}

export function parseGl200Message(text: string): Gl200Message {
  const trimmed = text.replace(/[$\r\n\0]+$/, '');
  const fields = trimmed.split(',');
  const head = HEAD.exec(fields[0] ?? '');
  if (!head) throw new MalformedFrameError(`not a Queclink text message: ${JSON.stringify(trimmed.slice(0, 20))}`);
  let version: string | undefined;
  let imeiAt = 1;
  if (!IMEI.test(fields[1] ?? '')) {
    version = fields[1];
    imeiAt = 2;
    if (!VERSION.test(version ?? '')) throw new MalformedFrameError(`Queclink protocol version ${JSON.stringify(version)}`);
  }
  const imei = fields[imeiAt] ?? '';
  if (!IMEI.test(imei)) throw new MalformedFrameError(`Queclink IMEI ${JSON.stringify(imei)}`);
  return {
    kind: head[1] as Gl200Message['kind'],
    type: head[2]!,
    version,
    imei,
    fields,
    body: imeiAt + 1,
    sendTime: fields.length > imeiAt + 2 ? gl200Time(fields[fields.length - 2]) : undefined,
    count: fields[fields.length - 1] ?? '',
  };
}
