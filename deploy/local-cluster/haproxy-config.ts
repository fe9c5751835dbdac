/** One backend server: its name on the statistics page and where it listens. */
export interface BackendServer {
  name: string;
  address: string;
}

export interface HaproxyTopology {
  /** `127.0.0.1:17000`, or `:3000` for every interface. */
  apiBind: string;
  apiServers: BackendServer[];
  trackers: Array<{ protocol: string; bind: string; servers: BackendServer[] }>;
  /** The statistics page (`/stats`); omitted, none. */
  statsBind?: string;
  /** The admin socket (`show stat` …); omitted, none. */
  statsSocket?: string;
  /**
   * A DNS server to resolve the servers' names with, again while running (Docker's 127.0.0.11:53, so a
   * container started again with another address is found); omitted, addresses are resolved once at start.
   */
  dnsResolver?: string;
  /** Seconds a silent connection is kept: above fleet's TRACKER_IDLE_TIMEOUT_S (600), so fleet, not HAProxy, closes idle trackers. */
  idleTimeoutS?: number;
}

/**
 * haproxy.cfg for fleet's API nodes and ingest nodes: HTTP, balanced round robin, with GET /readyz as
 * the health check, and one TCP frontend per tracker protocol, least connections, each server line with
 * `send-proxy-v2` so fleet (TRACKER_PROXY_PROTOCOL=true) sees the trackers' own addresses. A connection
 * to a server that refuses it (one that just died) is retried on another (`retries`, `option redispatch`).
 */
export function renderHaproxyConfig(topology: HaproxyTopology): string {
  const idle = topology.idleTimeoutS ?? 660;
  const check = `check inter 1s fall 2 rise 2${topology.dnsResolver ? ' resolvers dns init-addr libc,none' : ''}`;
  const lines = [
    '# Rendered by deploy/local-cluster/haproxy-config.ts.',
    'global',
    '  maxconn 4096',
    ...(topology.statsSocket ? [`  stats socket ${topology.statsSocket} mode 600 level admin`] : []),
    ...(topology.dnsResolver ? ['', 'resolvers dns', `  nameserver dns1 ${topology.dnsResolver}`, '  hold valid 10s'] : []),
    '',
    'defaults',
    '  timeout connect 5s',
    `  timeout client ${idle}s`,
    `  timeout server ${idle}s`,
    '  retries 3',
    // 1: every retry goes to another server, so a tracker whose node just died waits one retry, not three.
    '  option redispatch 1',
    '',
    'frontend api',
    '  mode http',
    `  bind ${topology.apiBind}`,
    '  option forwardfor',
    '  default_backend api',
    '',
    'backend api',
    '  mode http',
    '  balance roundrobin',
    // HTTP/1.1 with a Host header: Node's HTTP server answers a bare HTTP/1.0 check with 400.
    '  option httpchk',
    '  http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host localhost',
    '  http-check expect status 200',
    // A node that died with idle connections open: a GET that meets one is sent again to another
    // node; anything else is never sent twice (a command must not be posted twice).
    '  retry-on conn-failure empty-response',
    '  http-request disable-l7-retry unless METH_GET || METH_HEAD',
    ...topology.apiServers.map((s) => `  server ${s.name} ${s.address} ${check}`),
  ];
  for (const tracker of topology.trackers) {
    lines.push(
      '',
      `frontend trackers-${tracker.protocol}`,
      '  mode tcp',
      `  bind ${tracker.bind}`,
      `  default_backend ingest-${tracker.protocol}`,
      '',
      `backend ingest-${tracker.protocol}`,
      '  mode tcp',
      '  balance leastconn',
      ...tracker.servers.map((s) => `  server ${s.name} ${s.address} ${check} send-proxy-v2`),
    );
  }
  if (topology.statsBind) {
    lines.push('', 'listen stats', '  mode http', `  bind ${topology.statsBind}`, '  stats enable', '  stats uri /stats', '  stats refresh 5s');
  }
  return `${lines.join('\n')}\n`;
}
