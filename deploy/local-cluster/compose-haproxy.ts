import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TRACKER_PROTOCOLS } from '../../ingest/protocol-catalog.ts';
import { INGEST_NODES, API_NODES } from './cluster-layout.ts';
import { renderHaproxyConfig, type HaproxyTopology } from './haproxy-config.ts';

// The `cluster` profile of docker-compose.yml mounts deploy/local-cluster/haproxy.cfg: the same
// rendering as the local cluster's, with the compose services' names and the usual ports inside the
// network. deploy/local-cluster/haproxy-config.test.ts checks the file is this rendering; after a change:
//   node --import tsx deploy/local-cluster/compose-haproxy.ts > deploy/local-cluster/haproxy.cfg

export const COMPOSE_HAPROXY_CONFIG = join(import.meta.dirname, 'haproxy.cfg');

export function composeTopology(): HaproxyTopology {
  return {
    apiBind: ':3000',
    apiServers: Array.from({ length: API_NODES }, (_, i) => ({ name: `api-${i + 1}`, address: `cluster-api-${i + 1}:3000` })),
    trackers: TRACKER_PROTOCOLS.map(({ protocol }) => ({
      protocol: protocol.name,
      bind: `:${protocol.defaultPort}`,
      servers: Array.from({ length: INGEST_NODES }, (_, i) => ({ name: `ingest-${i + 1}`, address: `cluster-ingest-${i + 1}:${protocol.defaultPort}` })),
    })),
    statsBind: ':8404',
    dnsResolver: '127.0.0.11:53',
  };
}

export function committedComposeConfig(): string {
  return readFileSync(COMPOSE_HAPROXY_CONFIG, 'utf8');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.stdout.write(renderHaproxyConfig(composeTopology()));
