import type { SimulatedFix } from './teltonika-packets.ts';

const KNOTS_PER_KMH = 1 / 1.852;
/** Mexico City, where the simulations drive: Coban devices are set to the local zone and send both clocks. */
const LOCAL_OFFSET_MINUTES = -6 * 60;

const two = (n: number) => String(n).padStart(2, '0');
const ascii = (text: string): Uint8Array => Buffer.from(text, 'latin1');

/** The login a Coban device sends on connecting, `##,imei:<imei>,A;`; the server answers `LOAD`. */
export function gps103Login(imei: string): Uint8Array {
  return ascii(`##,imei:${imei},A;`);
}

/** The heartbeat, the bare IMEI and `;`; the server answers `ON`. */
export function gps103Heartbeat(imei: string): Uint8Array {
  return ascii(`${imei};`);
}

/** `d…dmm.mmmm`: whole degrees (2 digits for latitude, 3 for longitude) and minutes to 4 decimals. */
function degreesMinutes(value: number, degreeDigits: number): string {
  // Rounded in ten-thousandths of a minute first, so 59.99996′ carries into the degree instead of printing 60.0000.
  const total = Math.round(Math.abs(value) * 600_000);
  const degrees = Math.floor(total / 600_000);
  const minutes = (total % 600_000) / 10_000;
  return `${String(degrees).padStart(degreeDigits, '0')}${minutes.toFixed(4).padStart(7, '0')}`;
}

/** `yymmddHHMMss` of `time` on a clock `offsetMinutes` from UTC. */
function clock(time: Date, offsetMinutes: number): string {
  const t = new Date(time.getTime() + offsetMinutes * 60_000);
  return `${two(t.getUTCFullYear() % 100)}${two(t.getUTCMonth() + 1)}${two(t.getUTCDate())}${two(t.getUTCHours())}${two(t.getUTCMinutes())}${two(t.getUTCSeconds())}`;
}

/**
 * One report line as a TK103A/B sends it: `imei:<imei>,<type>,<local yymmddHHMMss>,,F,<UTC hhmmss.sss>,A,
 * <lat>,N|S,<lon>,E|W,<speed knots>,<course>,<altitude>,<ignition>,<door>,<fuel1 %>,,;`. The device's
 * clock runs in its local zone; the server finds the offset from the UTC time beside it.
 */
export function gps103Report(imei: string, fix: SimulatedFix, type = 'tracker', offsetMinutes = LOCAL_OFFSET_MINUTES): string {
  const utc = fix.time;
  const utcTime = `${two(utc.getUTCHours())}${two(utc.getUTCMinutes())}${two(utc.getUTCSeconds())}.${String(utc.getUTCMilliseconds()).padStart(3, '0')}`;
  const fields = [
    `imei:${imei}`, type, clock(utc, offsetMinutes), '', 'F', utcTime, fix.satellites > 0 ? 'A' : 'V',
    degreesMinutes(fix.latitude, 2), fix.latitude < 0 ? 'S' : 'N',
    degreesMinutes(fix.longitude, 3), fix.longitude < 0 ? 'W' : 'E',
    (fix.speedKmh * KNOTS_PER_KMH).toFixed(2), (fix.heading % 360).toFixed(2),
    fix.altitude === undefined ? '' : fix.altitude.toFixed(1),
    fix.ignition ? '1' : '0', '0',
    fix.fuelPercent === undefined ? '' : `${fix.fuelPercent.toFixed(2)}%`, '', '',
  ];
  return `${fields.join(',')};`;
}

/** Periodic reports (`tracker`), one line per fix, as a device sends what it stored while offline. */
export function gps103Reports(imei: string, fixes: SimulatedFix[]): Uint8Array {
  return ascii(fixes.map((fix) => gps103Report(imei, fix)).join(''));
}

/**
 * A command's answer: the command letter and `t` as the report type (`jt` after J). It goes without a
 * fix (`L`, the serving cell left empty), since the answer is the device's word, not a new position.
 */
export function gps103Answer(imei: string, answer: string, time: Date, offsetMinutes = LOCAL_OFFSET_MINUTES): Uint8Array {
  return ascii(`imei:${imei},${answer},${clock(time, offsetMinutes)},,L,,,,,,,,;`);
}

/** What the server sends a GPS103 device: `LOAD` (login), `ON` (heartbeat), or a command `**,imei:<imei>,<code>`. */
export type Gps103ServerMessage = { consumed: number } & (
  | { kind: 'load' }
  | { kind: 'on' }
  | { kind: 'command'; imei: string; code: string }
  /** Bytes that start no server message, skipped up to the next that could. */
  | { kind: 'noise' }
);

const COMMAND_HEAD = /^\*\*,imei:(\d+),/;
/** The start of a command head, cut short by the end of what arrived. */
const PARTIAL_HEAD = /^\*\*(?:,(?:i(?:m(?:e(?:i(?::\d*)?)?)?)?)?)?$/;
/** A server message's first bytes. */
const STARTS = ['**', 'ON', 'LOAD'];

/**
 * The server message at the start of `received`, or undefined while incomplete. Commands carry no
 * terminator (`**,imei:<imei>,J`, as the devices take them), so one ends at a `;` if it has one, at the
 * next `**`, or at the end of what arrived, as a device's modem hands over each server write whole.
 * The heartbeat's `ON` may arrive glued behind a command; no Coban command ends in `ON` or `LOAD`, so a
 * trailing one is read as that answer.
 */
export function readGps103ServerMessage(received: Uint8Array): Gps103ServerMessage | undefined {
  if (received.length === 0) return undefined;
  const text = Buffer.from(received.buffer, received.byteOffset, received.length).toString('latin1');
  if (text.startsWith('LOAD')) return { kind: 'load', consumed: 4 };
  if (text.startsWith('ON')) return { kind: 'on', consumed: 2 };
  if (STARTS.some((start) => text.length < start.length && start.startsWith(text))) return undefined;
  if (text.startsWith('**')) {
    const head = COMMAND_HEAD.exec(text);
    if (!head) return PARTIAL_HEAD.test(text) ? undefined : { kind: 'noise', consumed: 2 };
    const rest = text.slice(head[0].length);
    const semicolon = rest.indexOf(';');
    const next = rest.indexOf('**');
    let code: string;
    let consumed: number;
    if (semicolon >= 0 && (next < 0 || semicolon < next)) {
      code = rest.slice(0, semicolon);
      consumed = head[0].length + semicolon + 1;
    } else {
      code = next >= 0 ? rest.slice(0, next) : rest;
      const glued = /^(.+?)(?:ON|LOAD)$/.exec(code);
      if (glued) code = glued[1]!;
      consumed = head[0].length + code.length;
    }
    if (code === '') return undefined;
    return { kind: 'command', consumed, imei: head[1]!, code };
  }
  let skip = 1;
  while (skip < text.length && !STARTS.some((start) => text.startsWith(start[0]!, skip))) skip++;
  return { kind: 'noise', consumed: skip };
}
