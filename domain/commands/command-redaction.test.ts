import { describe, expect, it } from 'vitest';
import { REDACTED, redactedCommand } from './command-redaction.ts';

describe('redactedCommand', () => {
  it('hides device passwords in params, whatever the param is called', () => {
    expect(redactedCommand({ params: { variant: 'dyd', password: '123456', output: 1, devicePin: 4321 } })).toEqual({
      params: { variant: 'dyd', password: REDACTED, output: 1, devicePin: REDACTED },
      text: undefined,
    });
  });

  it('hides the password field of a raw Queclink command and keeps the rest of its text', () => {
    expect(redactedCommand({ params: {}, text: 'AT+GTOUT=gv300,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,FFFF$' }).text).toBe(
      `AT+GTOUT=${REDACTED},1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,FFFF$`,
    );
    expect(redactedCommand({ params: {}, text: 'setdigout 1' }).text).toBe('setdigout 1');
  });
});
