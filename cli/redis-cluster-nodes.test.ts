import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';

describe('REDIS_CLUSTER_NODES', () => {
  it('is a comma-separated list of host:port, IPv6 hosts in brackets, with REDIS_PASSWORD', () => {
    const config = loadConfig({ REDIS_CLUSTER_NODES: 'redis-a:7000, 10.0.0.2:7001,[::1]:7002', REDIS_PASSWORD: 's3cret' });
    expect(config.redisCluster).toEqual({
      nodes: [{ host: 'redis-a', port: 7000 }, { host: '10.0.0.2', port: 7001 }, { host: '::1', port: 7002 }],
      password: 's3cret',
    });
    expect(config.redisUrl).toBeUndefined();
  });

  it('is absent by default, and without a password when REDIS_PASSWORD is not set', () => {
    expect(loadConfig({}).redisCluster).toBeUndefined();
    expect(loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000' }).redisCluster).toEqual({ nodes: [{ host: '127.0.0.1', port: 7000 }], password: undefined });
  });

  it.each([
    [{ REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_URL: 'redis://127.0.0.1:6379' }, 'REDIS_URL and REDIS_CLUSTER_NODES are both set'],
    [{ REDIS_CLUSTER_NODES: 'redis://127.0.0.1:7000' }, 'REDIS_CLUSTER_NODES takes host:port entries'],
    [{ REDIS_CLUSTER_NODES: '127.0.0.1' }, 'got "127.0.0.1"'],
    [{ REDIS_CLUSTER_NODES: '127.0.0.1:0' }, 'got "127.0.0.1:0"'],
    [{ REDIS_PASSWORD: 'x', REDIS_URL: 'redis://127.0.0.1:6379' }, 'REDIS_PASSWORD is set without REDIS_CLUSTER_NODES'],
  ])('refuses %j at start', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
