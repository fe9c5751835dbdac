import { redactUrl } from '../runtime/redact-url.ts';

/** The fields of an `INFO` answer (`name:value` lines; `# Section` headers and blank lines skipped). */
export function parseRedisInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    if (line === '' || line.startsWith('#')) continue;
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/** `url` with its host and port replaced by the master's, its password hidden as redactUrl hides it. */
function masterUrl(url: string, host: string, port: string | undefined): string {
  try {
    const parsed = new URL(url);
    parsed.hostname = host.includes(':') ? `[${host}]` : host;
    parsed.port = port ?? '';
    return redactUrl(parsed.toString());
  } catch {
    return port ? `${host}:${port}` : host;
  }
}

/**
 * Why the Redis that `INFO` describes cannot hold fleetcore's queues, in one line for the operator, or
 * undefined when it can. A Redis Cluster node answers most keys with MOVED to a client that does not
 * know the cluster (REDIS_CLUSTER_NODES makes one that does). A replica refuses the writes the queues
 * make (or, when writable, keeps them only until its next sync); and a Redis that evicts keys under
 * memory pressure drops jobs, which are events never produced.
 */
export function redisServerProblem(info: ReadonlyMap<string, string>, url: string): string | undefined {
  const named = `REDIS_URL ${redactUrl(url)}`;
  if (info.get('cluster_enabled') === '1') {
    return `${named} names a node of a Redis Cluster, which REDIS_URL cannot reach as a whole; name its nodes in REDIS_CLUSTER_NODES instead (e.g. REDIS_CLUSTER_NODES=host1:6379,host2:6379,host3:6379) and unset REDIS_URL`;
  }
  const role = info.get('role');
  if (role === 'slave' || role === 'replica') {
    const host = info.get('master_host');
    const of = host ? ` of ${masterUrl(url, host, info.get('master_port'))}` : '';
    const readOnly = (info.get('slave_read_only') ?? info.get('replica_read_only')) !== '0';
    const why = readOnly ? 'it refuses the writes the queues make' : 'what fleetcore writes there is lost at its next sync with the master';
    return `${named} names a ${readOnly ? 'read-only ' : ''}replica${of}: ${why}; point REDIS_URL at the primary`;
  }
  return evictionProblem(info, named);
}

/** Why a Redis (or a cluster's master) that `INFO` describes would lose queue keys, or undefined. `named`: how to name it. */
export function evictionProblem(info: ReadonlyMap<string, string>, named: string): string | undefined {
  const maxmemory = Number(info.get('maxmemory') ?? '0');
  const policy = info.get('maxmemory_policy');
  if (maxmemory > 0 && policy !== undefined && policy !== 'noeviction') {
    const limit = info.get('maxmemory_human') ?? `${maxmemory} bytes`;
    return `${named} evicts keys when full (maxmemory ${limit}, maxmemory-policy ${policy}), and an evicted queue key is a job lost with its events; set maxmemory-policy noeviction on it, or give fleetcore a Redis of its own`;
  }
  return undefined;
}
