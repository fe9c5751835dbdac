import { describe, expect, it } from 'vitest';
import { UsageError } from '../usage-error.ts';
import { parseRoles } from './serve.ts';

describe('fleet serve --roles', () => {
  it('runs every role by default and any subset on request', () => {
    expect([...parseRoles(undefined)].sort()).toEqual(['api', 'engine', 'ingest']);
    expect([...parseRoles('engine')]).toEqual(['engine']);
    expect([...parseRoles('api, ingest')].sort()).toEqual(['api', 'ingest']);
  });

  it('refuses an unknown or empty role list with the allowed names', () => {
    expect(() => parseRoles('api,worker')).toThrow(UsageError);
    expect(() => parseRoles('api,worker')).toThrow('--roles takes a comma-separated list of api, ingest, engine; got "api,worker"');
    expect(() => parseRoles(',')).toThrow(UsageError);
  });
});
