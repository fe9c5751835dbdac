import { describe, expect, it } from 'vitest';
import { answerRefuses } from './answer-outcome.ts';

describe('a command answer', () => {
  it.each([
    'DOUT1:1 Timeout:INFINITY DOUT2:IGNORED',
    'Cut off the fuel supply: Success!',
    'Restore fuel supply: Success!',
    'C01,OK',
    'GTOUT,0004',
    'S20,DONE,130305',
    'BV010',
    'Already in the state of fuel supply cut off, the command is not running!',
  ])('acknowledges %j', (text) => expect(answerRefuses(text)).toBe(false));

  it.each(['Error', 'C01,Error', 'Invalid command', 'Unknown command', 'Password error!', 'FAIL', 'Command not supported', 'Operation denied'])(
    'refuses %j',
    (text) => expect(answerRefuses(text)).toBe(true),
  );
});
