import type { CommandRequest } from './command-catalog.ts';

export const REDACTED = '[redacted]';

/** Param names that carry a device's password or PIN, in any protocol's encoder or a client's custom params. */
const SECRET_PARAM = /pass(word)?|pwd|pin|secret|token/i;

/**
 * Queclink's `AT+GT<cmd>=<password>,...$` puts the device password first; a raw command in that
 * form keeps its command word and fields, but not the password.
 */
const QUECLINK_PASSWORD = /^(AT\+GT[A-Z]{3}=)[^,$]*/i;

/**
 * A command as the audit log and the API show it to people: device passwords replaced by
 * `[redacted]`, everything else as sent. The row itself keeps them, as the encoder needs them on
 * every attempt.
 */
export function redactedCommand(command: Pick<CommandRequest, 'params' | 'text'>): { params: Record<string, unknown>; text: string | undefined } {
  const params: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(command.params)) params[name] = SECRET_PARAM.test(name) ? REDACTED : value;
  const text = command.text?.replace(QUECLINK_PASSWORD, `$1${REDACTED}`);
  return { params, text };
}
