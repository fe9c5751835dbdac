import { gl200Commands } from '../protocols/gl200/gl200-commands.ts';
import { gt06Commands } from '../protocols/gt06/gt06-commands.ts';
import { h02Commands } from '../protocols/h02/h02-commands.ts';
import { meitrackCommands } from '../protocols/meitrack/meitrack-commands.ts';
import { teltonikaCommands } from '../protocols/teltonika/teltonika-commands.ts';
import { tk103Commands } from '../protocols/tk103/tk103-commands.ts';
import type { CommandEncoder, CommandType } from '../../domain/commands/command-catalog.ts';

/** The command encoder of every TCP tracker protocol, by protocol name (OsmAnd phones take no commands). */
export const COMMAND_ENCODERS: ReadonlyMap<string, CommandEncoder> = new Map(
  [teltonikaCommands, gt06Commands, h02Commands, gl200Commands, meitrackCommands, tk103Commands].map((e) => [e.protocol, e]),
);

/** Why a protocol cannot take a command type, or undefined when it can. */
export function unsupportedReason(protocol: string | null, type: CommandType): string | undefined {
  if (protocol === null) return 'the vehicle has no protocol yet: it has not connected, and none was given when it was registered';
  const encoder = COMMAND_ENCODERS.get(protocol);
  if (!encoder) return `the ${protocol} protocol takes no commands`;
  if (!encoder.types.includes(type)) return `the ${protocol} protocol cannot express ${type} (it can: ${encoder.types.join(', ')})`;
  return undefined;
}
