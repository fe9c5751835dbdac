import type { CommandEncoder, CommandType } from '../domain/commands/command-catalog.ts';
import type { Protocol } from './protocol.ts';
import { gl200 } from './protocols/gl200/gl200.ts';
import { gps103 } from './protocols/gps103/gps103.ts';
import { gt06 } from './protocols/gt06/gt06.ts';
import { h02 } from './protocols/h02/h02.ts';
import { jt808 } from './protocols/jt808/jt808.ts';
import { meitrack } from './protocols/meitrack/meitrack.ts';
import { ruptela } from './protocols/ruptela/ruptela.ts';
import { suntech } from './protocols/suntech/suntech.ts';
import { teltonika } from './protocols/teltonika/teltonika.ts';
import { tk103 } from './protocols/tk103/tk103.ts';
import { watch } from './protocols/watch/watch.ts';
import { wialon } from './protocols/wialon/wialon.ts';

/**
 * Every tracker protocol served over TCP, with the variable that moves (or, with 0, disables) its port.
 * A protocol carries its framer, decoder and command encoder, so adding one is its folder and a line here.
 */
export const TRACKER_PROTOCOLS: ReadonlyArray<{ protocol: Protocol; portVariable: string }> = [
  { protocol: teltonika, portVariable: 'TELTONIKA_PORT' },
  { protocol: gt06, portVariable: 'GT06_PORT' },
  { protocol: h02, portVariable: 'H02_PORT' },
  { protocol: gl200, portVariable: 'GL200_PORT' },
  { protocol: meitrack, portVariable: 'MEITRACK_PORT' },
  { protocol: tk103, portVariable: 'TK103_PORT' },
  { protocol: jt808, portVariable: 'JT808_PORT' },
  { protocol: gps103, portVariable: 'GPS103_PORT' },
  { protocol: wialon, portVariable: 'WIALON_PORT' },
  { protocol: suntech, portVariable: 'SUNTECH_PORT' },
  { protocol: ruptela, portVariable: 'RUPTELA_PORT' },
  { protocol: watch, portVariable: 'WATCH_PORT' },
];

const BY_NAME: ReadonlyMap<string, Protocol> = new Map(TRACKER_PROTOCOLS.map(({ protocol }) => [protocol.name, protocol]));

/** The command encoder of a device's protocol; undefined for one that takes no commands (OsmAnd phones) or no protocol of that name. */
export function commandEncoder(protocol: string): CommandEncoder | undefined {
  return BY_NAME.get(protocol)?.commands;
}

/** Why a device on `protocol` cannot take a command type, or undefined when it can. */
export function unsupportedReason(protocol: string | null, type: CommandType): string | undefined {
  if (protocol === null) return 'the vehicle has no protocol yet: it has not connected, and none was given when it was registered';
  const encoder = commandEncoder(protocol);
  if (!encoder) return `the ${protocol} protocol takes no commands`;
  if (!encoder.types.includes(type)) return `the ${protocol} protocol cannot express ${type} (it can: ${encoder.types.join(', ')})`;
  return undefined;
}
