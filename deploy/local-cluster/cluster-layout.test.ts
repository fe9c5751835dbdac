import { describe, expect, it } from 'vitest';
import { TRACKER_PROTOCOLS } from '../../ingest/protocol-catalog.ts';
import { clusterLayout, layoutFromEnvironment } from './cluster-layout.ts';

/** Every port a layout hands out, each with what it is for. */
function allPorts(base: number): Array<[string, number]> {
  const l = clusterLayout(base, '/tmp/x');
  return [
    ['api', l.apiPort], ['stats', l.statsPort],
    ...l.redisPorts.map((p, i): [string, number] => [`redis-${i}`, p]),
    ...l.redisBusPorts.map((p, i): [string, number] => [`redis-bus-${i}`, p]),
    ['primary', l.postgresPrimaryPort], ['replica', l.postgresReplicaPort], ['pgbouncer', l.pgbouncerPort],
    ...l.apiNodePorts.map((p, i): [string, number] => [`api-node-${i}`, p]),
    ...l.trackers.flatMap((t) => [[`${t.protocol}`, t.public] as [string, number], ...t.nodes.map((p, i): [string, number] => [`${t.protocol}-${i}`, p])]),
  ];
}

describe('clusterLayout', () => {
  it('gives every part a port of its own, all within 400 of the base', () => {
    const ports = allPorts(17000);
    expect(new Set(ports.map(([, p]) => p)).size).toBe(ports.length);
    expect(ports.every(([, p]) => p >= 17000 && p < 17400)).toBe(true);
  });

  it('puts each tracker protocol of the catalog on public port base+100+i, and the ingest nodes on +200+i and +300+i', () => {
    const { trackers } = clusterLayout(17000, '/tmp/x');
    expect(trackers.map((t) => t.variable)).toEqual(TRACKER_PROTOCOLS.map((p) => p.portVariable));
    expect(trackers[0]).toEqual({ protocol: 'teltonika', variable: 'TELTONIKA_PORT', public: 17100, nodes: [17200, 17300] });
  });

  it('refuses a base that would run past 65535 or below 1024', () => {
    expect(() => clusterLayout(65200, '/tmp/x')).toThrow(/port base/);
    expect(() => clusterLayout(80, '/tmp/x')).toThrow(/port base/);
  });

  it('reads LOCAL_CLUSTER_DIR, LOCAL_CLUSTER_PORT_BASE and LOCAL_CLUSTER_POOL_MODE', () => {
    expect(layoutFromEnvironment({ LOCAL_CLUSTER_DIR: '/srv/lc', LOCAL_CLUSTER_PORT_BASE: '20000', LOCAL_CLUSTER_POOL_MODE: 'transaction' })).toMatchObject({
      dir: '/srv/lc', portBase: 20000, apiPort: 20000, poolMode: 'transaction',
    });
    expect(layoutFromEnvironment({})).toMatchObject({ portBase: 17000, poolMode: 'session', dir: expect.stringMatching(/\/\.local-cluster$/) });
    expect(() => layoutFromEnvironment({ LOCAL_CLUSTER_POOL_MODE: 'statement' })).toThrow(/session or transaction/);
  });
});
