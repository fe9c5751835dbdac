import { describe, expect, it } from 'vitest';
import { defaultMaxConnections, openFileLimit } from './file-descriptor-limit.ts';

const limits = (line: string) => () => `Limit                     Soft Limit           Hard Limit           Units     \n${line}\nMax processes 1 1 processes\n`;

describe('openFileLimit', () => {
  it('reads the soft limit of open files', () => {
    expect(openFileLimit(limits('Max open files            20000                1048576              files     '))).toBe(20000);
    expect(openFileLimit(limits('Max open files            unlimited            unlimited            files     '))).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('assumes 1024 when the limit cannot be read', () => {
    expect(openFileLimit(() => { throw new Error('no /proc'); })).toBe(1024);
    expect(openFileLimit(limits('Max open files  lots'))).toBe(1024);
  });

  it('leaves room for what the process opens besides connections', () => {
    expect(defaultMaxConnections(20_000)).toBe(19_744);
    expect(defaultMaxConnections(100)).toBe(16);
  });
});
