import { describe, expect, it } from 'vitest';
import { commandEncoder, TRACKER_PROTOCOLS, unsupportedReason } from './protocol-catalog.ts';
import { COMMAND_TYPES } from '../domain/commands/command-catalog.ts';

/**
 * Protocols with no engine control of their own: Wialon IPS carries only text messages to the device
 * (`#M#…`), whose meaning each firmware defines; Watch trackers are personal devices with no relay.
 */
const NO_ENGINE_CONTROL = new Set(['wialon', 'watch']);

describe('command encoders', () => {
  it('exist for every TCP tracker protocol, each able to send custom text and, where the protocol has it, cut and restore the engine', () => {
    for (const { protocol } of TRACKER_PROTOCOLS) {
      const encoder = protocol.commands;
      expect(encoder, protocol.name).toBeDefined();
      expect(commandEncoder(protocol.name), protocol.name).toBe(encoder);
      expect(encoder!.protocol, protocol.name).toBe(protocol.name);
      const types = NO_ENGINE_CONTROL.has(protocol.name) ? (['custom'] as const) : (['engine_stop', 'engine_resume', 'custom'] as const);
      for (const type of types) expect(encoder!.types, `${protocol.name} ${type}`).toContain(type);
      for (const type of encoder!.types) expect(COMMAND_TYPES).toContain(type);
    }
  });

  it('names the protocol and what it can do when a type cannot be expressed', () => {
    expect(unsupportedReason('teltonika', 'engine_stop')).toBeUndefined();
    expect(unsupportedReason('gt06', 'take_photo')).toBe('the gt06 protocol cannot express take_photo (it can: engine_stop, engine_resume, custom)');
    expect(unsupportedReason('osmand', 'engine_stop')).toBe('the osmand protocol takes no commands');
    expect(unsupportedReason(null, 'engine_stop')).toMatch(/no protocol yet/);
  });
});
