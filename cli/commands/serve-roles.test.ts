import { describe, expect, it } from 'vitest';
import { UsageError } from '../usage-error.ts';
import { StartupError } from '../../runtime/startup-error.ts';
import { checkRoles } from '../server/start-server.ts';
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

describe('fleet serve with some roles', () => {
  it('refuses any split of the roles without REDIS_URL, naming what is missing', () => {
    expect(() => checkRoles(new Set(['api']), undefined)).toThrow(StartupError);
    expect(() => checkRoles(new Set(['api']), undefined)).toThrow(
      '--roles api needs REDIS_URL or REDIS_CLUSTER_NODES: the ingest and engine roles in another process can only share the engine queue through Redis',
    );
    expect(() => checkRoles(new Set(['ingest', 'api']), undefined)).toThrow('the engine role in another process');
    expect(() => checkRoles(new Set(['engine']), undefined)).toThrow(StartupError);
  });

  it('allows every role without Redis, and any split with it', () => {
    expect(() => checkRoles(new Set(['api', 'ingest', 'engine']), undefined)).not.toThrow();
    expect(() => checkRoles(new Set(['api']), 'redis://127.0.0.1:6379')).not.toThrow();
  });
});
