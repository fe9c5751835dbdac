import { describe, expect, it } from 'vitest';
import { commandEncoder, TRACKER_PROTOCOLS, unsupportedReason } from './protocol-catalog.ts';
import { COMMAND_TYPES } from '../domain/commands/command-catalog.ts';

describe('command encoders', () => {
  it('exist for every TCP tracker protocol, each able to cut and restore the engine and send custom text', () => {
    for (const { protocol } of TRACKER_PROTOCOLS) {
      const encoder = protocol.commands;
      expect(encoder, protocol.name).toBeDefined();
      expect(commandEncoder(protocol.name), protocol.name).toBe(encoder);
      expect(encoder!.protocol, protocol.name).toBe(protocol.name);
      for (const type of ['engine_stop', 'engine_resume', 'custom'] as const) expect(encoder!.types, `${protocol.name} ${type}`).toContain(type);
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
