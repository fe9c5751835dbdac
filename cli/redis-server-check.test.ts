import { describe, expect, it } from 'vitest';
import { parseRedisInfo, redisServerProblem } from './redis-server-check.ts';

// INFO answers as Redis 7 gives them (CRLF lines, `# Section` headers), cut to the sections the check reads.
const info = (memory: string, replication: string, cluster: string) =>
  [
    '# Server', 'redis_version:7.0.15', 'redis_mode:standalone', '',
    '# Memory', memory, '',
    '# Replication', replication, '',
    '# Cluster', cluster, '',
  ].join('\r\n');

const UNLIMITED = 'maxmemory:0\r\nmaxmemory_human:0B\r\nmaxmemory_policy:noeviction';
const PRIMARY = 'role:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\nmaster_repl_offset:0';
const REPLICA = (readOnly: 0 | 1) =>
  `role:slave\r\nmaster_host:10.0.0.5\r\nmaster_port:6380\r\nmaster_link_status:up\r\nslave_read_only:${readOnly}\r\nreplica_announced:1`;
const STANDALONE = 'cluster_enabled:0';

const URL = 'redis://:s3cret@10.0.0.6:6379/2';

function problem(text: string, url = URL): string | undefined {
  const found = redisServerProblem(parseRedisInfo(text), url);
  if (found !== undefined) {
    expect(found).not.toContain('\n');
    expect(found).not.toContain('s3cret');
  }
  return found;
}

describe('redisServerProblem', () => {
  it('accepts a standalone primary, with no memory limit or one that never evicts', () => {
    expect(problem(info(UNLIMITED, PRIMARY, STANDALONE))).toBeUndefined();
    expect(problem(info('maxmemory:1073741824\r\nmaxmemory_human:1.00G\r\nmaxmemory_policy:noeviction', PRIMARY, STANDALONE))).toBeUndefined();
    // Without a limit the policy never applies (BullMQ still warns about it).
    expect(problem(info('maxmemory:0\r\nmaxmemory_human:0B\r\nmaxmemory_policy:allkeys-lru', PRIMARY, STANDALONE))).toBeUndefined();
  });

  it('refuses a Redis Cluster node and says where to point REDIS_URL instead', () => {
    expect(problem(info(UNLIMITED, PRIMARY, 'cluster_enabled:1'))).toBe(
      'REDIS_URL redis://:***@10.0.0.6:6379/2 names a node of a Redis Cluster, which REDIS_URL cannot reach as a whole; name its nodes in REDIS_CLUSTER_NODES instead (e.g. REDIS_CLUSTER_NODES=host1:6379,host2:6379,host3:6379) and unset REDIS_URL',
    );
  });

  it('refuses a read-only replica and names its master with the password hidden', () => {
    expect(problem(info(UNLIMITED, REPLICA(1), STANDALONE))).toBe(
      'REDIS_URL redis://:***@10.0.0.6:6379/2 names a read-only replica of redis://:***@10.0.0.5:6380/2: it refuses the writes the queues make; point REDIS_URL at the primary',
    );
  });

  it('refuses a writable replica too: its writes are lost at the next sync', () => {
    expect(problem(info(UNLIMITED, REPLICA(0), STANDALONE), 'redis://10.0.0.6:6379')).toBe(
      'REDIS_URL redis://10.0.0.6:6379 names a replica of redis://10.0.0.5:6380: what fleetcore writes there is lost at its next sync with the master; point REDIS_URL at the primary',
    );
  });

  it('refuses a replica whose master INFO does not name, and one whose master is an IPv6 address', () => {
    expect(problem(info(UNLIMITED, 'role:slave\r\nslave_read_only:1', STANDALONE))).toMatch(/names a read-only replica: it refuses/);
    expect(problem(info(UNLIMITED, 'role:slave\r\nmaster_host:fd00::5\r\nmaster_port:6379\r\nslave_read_only:1', STANDALONE))).toMatch(
      /replica of redis:\/\/:\*\*\*@\[fd00::5\]:6379\/2:/,
    );
  });

  it('refuses a Redis that evicts keys when it reaches maxmemory', () => {
    expect(problem(info('maxmemory:104857600\r\nmaxmemory_human:100.00M\r\nmaxmemory_policy:allkeys-lru', PRIMARY, STANDALONE))).toBe(
      'REDIS_URL redis://:***@10.0.0.6:6379/2 evicts keys when full (maxmemory 100.00M, maxmemory-policy allkeys-lru), and an evicted queue key is a job lost with its events; set maxmemory-policy noeviction on it, or give fleetcore a Redis of its own',
    );
    expect(problem(info('maxmemory:104857600\r\nmaxmemory_policy:volatile-ttl', PRIMARY, STANDALONE))).toMatch(/maxmemory 104857600 bytes, maxmemory-policy volatile-ttl/);
  });

  it('names the cluster first when a node is several things at once', () => {
    expect(problem(info('maxmemory:1\r\nmaxmemory_policy:allkeys-lru', REPLICA(1), 'cluster_enabled:1'))).toMatch(/Redis Cluster/);
    expect(problem(info('maxmemory:1\r\nmaxmemory_policy:allkeys-lru', REPLICA(1), STANDALONE))).toMatch(/replica/);
  });
});

describe('parseRedisInfo', () => {
  it('reads name:value lines, values that hold colons whole, and skips headers and blank lines', () => {
    const fields = parseRedisInfo('# Server\r\nredis_version:7.0.15\r\n\r\n# Keyspace\r\ndb0:keys=3,expires=0,avg_ttl=0\r\nexecutable:/usr/bin/redis-server\r\nconfig_file:C:\\redis.conf\r\n');
    expect(Object.fromEntries(fields)).toEqual({
      redis_version: '7.0.15', db0: 'keys=3,expires=0,avg_ttl=0', executable: '/usr/bin/redis-server', config_file: 'C:\\redis.conf',
    });
  });
});
