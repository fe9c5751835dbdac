import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../../runtime/redis-client.ts';
import type { Logger } from '../../runtime/logger.ts';
import { ThrottledNotice } from '../throttled-notice.ts';
import type { CommandBus } from './command-bus.ts';

export interface RedisCommandBusOptions {
  /** Namespaces keys and channels: two deployments sharing a Redis never see each other's. */
  prefix: string;
  /** How long an owner key lives unless refreshed; refreshed every third of it. */
  ownerTtlMs?: number;
}

// Refresh or release a device's owner key only while it still names this process: a device that has
// reconnected to another process belongs to that one, whose key must not be overwritten or deleted.
const REFRESH_IF_OURS = `
local owner = redis.call('GET', KEYS[1])
if owner == false or owner == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;
const RELEASE_IF_OURS = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * Commands across processes (`--processes N`, `--roles`): each ingest process has an id and a channel;
 * while it holds a device's connection, a key `<prefix>:command-owner:<device>` names it (set at login,
 * refreshed while connected, gone within its TTL after the process dies). Notifying a device is reading
 * that key and publishing the device id on the owner's channel. Pub/sub delivers at most once; a
 * message lost to a Redis restart is made up by the owner's periodic sweep of the database.
 */
export class RedisCommandBus implements CommandBus {
  readonly nodeId = randomUUID();
  private readonly owned = new Set<number>();
  private readonly ownerTtlMs: number;
  private readonly notice: ThrottledNotice;
  private handler: ((deviceId: number) => void) | undefined;
  private subscriber: RedisClient | undefined;
  private refresher: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly log: Logger,
    private readonly options: RedisCommandBusOptions,
  ) {
    this.ownerTtlMs = options.ownerTtlMs ?? 60_000;
    this.notice = new ThrottledNotice(log, 60_000);
  }

  private ownerKey(deviceId: number): string {
    return `${this.options.prefix}:command-owner:${deviceId}`;
  }

  private channel(nodeId: string): string {
    return `${this.options.prefix}:commands:${nodeId}`;
  }

  private failed(action: string, error: Error): void {
    this.notice.warn(`redis:${action}`, 'command routing through Redis failed; the periodic sweep delivers instead', { action, error: error.message });
  }

  async notify(deviceId: number): Promise<void> {
    if (this.owned.has(deviceId)) {
      this.handler?.(deviceId);
      return;
    }
    const owner = await this.redis.get(this.ownerKey(deviceId));
    if (owner === null) return; // not connected anywhere: its login picks the command up
    if (owner === this.nodeId) this.handler?.(deviceId);
    else await this.redis.publish(this.channel(owner), String(deviceId));
  }

  claim(deviceId: number): void {
    this.owned.add(deviceId);
    // The newest connection wins outright: the device left any other process.
    this.redis.set(this.ownerKey(deviceId), this.nodeId, 'PX', this.ownerTtlMs).catch((error: Error) => this.failed('claim', error));
  }

  release(deviceId: number): void {
    if (!this.owned.delete(deviceId)) return;
    this.redis.eval(RELEASE_IF_OURS, 1, this.ownerKey(deviceId), this.nodeId).catch((error: Error) => this.failed('release', error));
  }

  async listen(handler: (deviceId: number) => void): Promise<void> {
    this.handler = handler;
    const subscriber = this.redis.duplicate();
    this.subscriber = subscriber;
    subscriber.on('error', () => undefined); // reconnects and resubscribes on its own
    subscriber.on('message', (_channel: string, message: string) => {
      const deviceId = Number(message);
      if (Number.isInteger(deviceId)) this.handler?.(deviceId);
    });
    await subscriber.subscribe(this.channel(this.nodeId));
    this.refresher = setInterval(() => void this.refresh(), Math.max(1_000, Math.floor(this.ownerTtlMs / 3)));
    this.refresher.unref();
  }

  private async refresh(): Promise<void> {
    if (this.owned.size === 0) return;
    const pipeline = this.redis.pipeline();
    for (const deviceId of this.owned) pipeline.eval(REFRESH_IF_OURS, 1, this.ownerKey(deviceId), this.nodeId, this.ownerTtlMs);
    const results = await pipeline.exec().catch((error: Error) => {
      this.failed('refresh', error);
      return null;
    });
    const error = results?.find(([e]) => e)?.[0];
    if (error) this.failed('refresh', error);
  }

  async close(): Promise<void> {
    if (this.refresher) clearInterval(this.refresher);
    this.handler = undefined;
    for (const deviceId of [...this.owned]) this.release(deviceId);
    // The releases were sent first on the same connection; wait for them before it may be closed.
    await this.redis.ping().catch(() => undefined);
    this.subscriber?.disconnect();
    this.log.debug('command bus closed', { nodeId: this.nodeId });
  }
}
