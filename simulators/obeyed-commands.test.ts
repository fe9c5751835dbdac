import { describe, expect, it } from 'vitest';
import { obeyGt06, obeyTeltonika } from './obeyed-commands.ts';

const off = { out1: false, out2: false };

describe('a simulated tracker obeying commands', () => {
  it('sets Teltonika outputs as setdigout says, leaving ? alone, and answers each output\'s state', () => {
    expect(obeyTeltonika('setdigout 1', off)).toEqual({ outputs: { out1: true, out2: false }, answer: 'DOUT1:1 Timeout:INFINITY DOUT2:IGNORED' });
    expect(obeyTeltonika('setdigout ?1', { out1: true, out2: false })).toEqual({ outputs: { out1: true, out2: true }, answer: 'DOUT1:IGNORED DOUT2:1 Timeout:INFINITY' });
    expect(obeyTeltonika('setdigout 0', { out1: true, out2: true }).outputs).toEqual({ out1: false, out2: true });
    expect(obeyTeltonika('getinfo', off)).toEqual({ outputs: off, answer: 'Unknown command' });
  });

  it('cuts and restores a GT06 relay in either command dialect', () => {
    expect(obeyGt06('Relay,1#', off)).toEqual({ outputs: { out1: true, out2: false }, answer: 'Cut off the fuel supply: Success!' });
    expect(obeyGt06('HFYD,000000#', { out1: true, out2: false })).toEqual({ outputs: off, answer: 'Restore fuel supply: Success!' });
    expect(obeyGt06('WHERE#', off).answer).toBe('Unknown command');
  });
});
