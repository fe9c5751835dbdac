import type { RedisClient } from '../../runtime/redis-client.ts';
import type { Logger } from '../../runtime/logger.ts';
import type { StreamLeases } from './open-streams.ts';

// Both on Redis's own clock, so API processes on different hosts agree on when a lease runs out.
// A sorted set per credential: one member per open stream, scored by when its lease runs out.
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return 1
`;

// Added again if it is gone (Redis restarted empty, or this process stalled past its lease): the
// stream is still open, so it still counts.
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], now + lease, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], lease)
return 1
`;

export interface RedisStreamLeasesOptions {
  /** Key prefix: one per database, so deployments sharing a Redis do not count each other's streams. */
  prefix: string;
  /** A lease this process stops renewing (it died) runs out after this; renewed every third of it. */
  leaseMs?: number;
}

/**
 * Open streams per credential counted across every API process that shares a Redis. Each stream holds
 * a lease that its process renews while the stream is open and removes when it closes; a process that
 * dies stops renewing, so its streams stop counting within a lease (30 s by default).
 */
export class RedisStreamLeases implements StreamLeases {
  private readonly held = new Map<string, Set<string>>();
  private readonly prefix: string;
  private readonly leaseMs: number;
  private timer: NodeJS.Timeout | undefined;
  private failing = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly log: Logger,
    options: RedisStreamLeasesOptions,
  ) {
    this.prefix = options.prefix;
    this.leaseMs = options.leaseMs ?? 30_000;
  }

  async take(credential: string, lease: string, limit: number): Promise<boolean> {
    const taken = (await this.redis.eval(TAKE, 1, this.prefix + credential, lease, limit, this.leaseMs)) === 1;
    if (!taken) return false;
    let leases = this.held.get(credential);
    if (!leases) this.held.set(credential, (leases = new Set()));
    leases.add(lease);
    this.timer ??= setInterval(() => void this.renew(), Math.max(100, Math.floor(this.leaseMs / 3))).unref();
    return true;
  }

  async release(credential: string, lease: string): Promise<void> {
    const leases = this.held.get(credential);
    leases?.delete(lease);
    if (leases?.size === 0) this.held.delete(credential);
    if (this.held.size === 0) this.stopRenewing();
    await this.redis.zrem(this.prefix + credential, lease);
  }

  /** Releases every lease this process holds (it is stopping). */
  async close(): Promise<void> {
    this.stopRenewing();
    const held = [...this.held];
    this.held.clear();
    await Promise.all(held.map(([credential, leases]) => this.redis.zrem(this.prefix + credential, ...leases).catch(() => undefined)));
  }

  private stopRenewing(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async renew(): Promise<void> {
    try {
      const pipeline = this.redis.pipeline();
      for (const [credential, leases] of this.held) pipeline.eval(RENEW, 1, this.prefix + credential, this.leaseMs, ...leases);
      const results = (await pipeline.exec()) ?? [];
      const failed = results.find(([error]) => error);
      if (failed) throw failed[0];
      if (this.failing) this.log.info('event stream leases renewed in Redis again');
      this.failing = false;
    } catch (error) {
      if (!this.failing) this.log.warn('cannot renew event stream leases in Redis; other processes may count fewer open streams', { error: (error as Error).message });
      this.failing = true;
    }
  }
}
