import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clusterLayout } from './cluster-layout.ts';
import { renderHaproxyConfig } from './haproxy-config.ts';
import { committedComposeConfig, composeTopology } from './compose-haproxy.ts';
import { localTopology } from './haproxy.ts';

const layout = clusterLayout(17000, '/tmp/fleet-local-cluster');
const config = renderHaproxyConfig(localTopology(layout));

/** The lines of one `frontend`/`backend`/`listen` section, without its header. */
function section(header: string): string[] {
  const lines = config.split('\n');
  const start = lines.indexOf(header);
  expect(start, `no section "${header}"`).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((line, i) => i > start && line === '');
  return lines.slice(start + 1, end === -1 ? undefined : end).map((l) => l.trim());
}

describe('renderHaproxyConfig for the local cluster', () => {
  it('balances the API nodes over HTTP, checking GET /readyz', () => {
    expect(section('frontend api')).toEqual(['mode http', 'bind 127.0.0.1:17000', 'option forwardfor', 'default_backend api']);
    const backend = section('backend api');
    expect(backend).toContain('balance roundrobin');
    expect(backend).toContain('http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host localhost');
    expect(backend).toContain('http-check expect status 200');
    expect(backend.filter((l) => l.startsWith('server '))).toEqual([
      'server api-1 127.0.0.1:17030 check inter 1s fall 2 rise 2',
      'server api-2 127.0.0.1:17031 check inter 1s fall 2 rise 2',
    ]);
  });

  it('puts each tracker protocol\'s public port in front of both ingest nodes in TCP mode, with the PROXY protocol v2', () => {
    expect(section('frontend trackers-teltonika')).toEqual(['mode tcp', 'bind 127.0.0.1:17100', 'default_backend ingest-teltonika']);
    expect(section('backend ingest-teltonika')).toEqual([
      'mode tcp',
      'balance leastconn',
      'server ingest-1 127.0.0.1:17200 check inter 1s fall 2 rise 2 send-proxy-v2',
      'server ingest-2 127.0.0.1:17300 check inter 1s fall 2 rise 2 send-proxy-v2',
    ]);
    expect(section('frontend trackers-gt06')).toContain('bind 127.0.0.1:17101');
    // Every protocol of the catalog has its frontend, each on a port of its own.
    const binds = config.match(/^ {2}bind 127\.0\.0\.1:171\d\d$/gm) ?? [];
    expect(binds).toHaveLength(layout.trackers.length);
    expect(new Set(binds).size).toBe(binds.length);
  });

  it('keeps idle connections longer than fleet\'s tracker idle timeout (600 s), and retries a refused connection elsewhere', () => {
    const defaults = section('defaults');
    expect(defaults).toEqual(expect.arrayContaining(['timeout client 660s', 'timeout server 660s', 'retries 3', 'option redispatch 1']));
  });

});

describe('deploy/local-cluster/haproxy.cfg (docker-compose.yml, profile cluster)', () => {
  it('is the same rendering, for the compose services on the usual ports, resolved through Docker\'s DNS', () => {
    const rendered = renderHaproxyConfig(composeTopology());
    expect(committedComposeConfig(), 'regenerate: node --import tsx deploy/local-cluster/compose-haproxy.ts > deploy/local-cluster/haproxy.cfg').toBe(rendered);
    expect(rendered).toContain('  server ingest-2 cluster-ingest-2:5027 check inter 1s fall 2 rise 2 resolvers dns init-addr libc,none send-proxy-v2');
    expect(rendered).toContain('  nameserver dns1 127.0.0.11:53');
  });
});

const haproxyInstalled = spawnSync('haproxy', ['-v']).status === 0;
describe.skipIf(!haproxyInstalled)(`haproxy -c${haproxyInstalled ? '' : ' (skipped: haproxy is not installed)'}`, () => {
  it.each([
    ['the local cluster\'s', (dir: string) => renderHaproxyConfig({ ...localTopology(layout), statsSocket: join(dir, 'admin.sock') })],
    // The compose services' names do not resolve here: checked without looking them up (5 s of DNS timeouts otherwise).
    ['the compose file\'s', () => committedComposeConfig().replaceAll('init-addr libc,none', 'init-addr none')],
  ])('accepts %s configuration', (_, config) => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-haproxy-config-'));
    try {
      writeFileSync(join(dir, 'haproxy.cfg'), config(dir));
      const check = spawnSync('haproxy', ['-c', '-f', join(dir, 'haproxy.cfg')], { encoding: 'utf8' });
      expect(check.status, `${check.stdout}${check.stderr}`).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
