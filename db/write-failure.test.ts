import { describe, expect, it } from 'vitest';
import { classifyWriteFailure } from './write-failure.ts';

const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { code });

describe('classifyWriteFailure', () => {
  it.each([
    ['08006 connection failure', pgError('08006'), 'retryable'],
    ['57P01 session terminated by an administrator', pgError('57P01'), 'retryable'],
    ['55000 database not accepting connections', pgError('55000'), 'retryable'],
    ['40001 serialization failure', pgError('40001'), 'retryable'],
    ['40P01 deadlock', pgError('40P01'), 'retryable'],
    ['ECONNREFUSED before reaching the server', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), 'retryable'],
    ['a connection node-postgres lost', new Error('Connection terminated unexpectedly'), 'retryable'],
    ['a pool that could not connect in time', new Error('timeout exceeded when trying to connect'), 'retryable'],
    ['22003 numeric value out of range', pgError('22003'), 'data'],
    ['23514 check violation', pgError('23514'), 'data'],
    ['42703 undefined column (a bad deploy)', pgError('42703'), 'fatal'],
    ['42501 permission denied', pgError('42501'), 'fatal'],
    ['53100 disk full', pgError('53100'), 'fatal'],
    ['a bug of ours', new TypeError('x is undefined'), 'fatal'],
  ])('%s is %s', (_, error, kind) => {
    expect(classifyWriteFailure(error)).toBe(kind);
  });
});
