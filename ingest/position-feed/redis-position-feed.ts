import { isCluster, type RedisClient } from '../../runtime/redis-client.ts';
import type { FeedFix, PositionFeed } from '../../domain/events/position-feed.ts';
import type { Logger } from '../../runtime/logger.ts';
import { ThrottledNotice } from '../throttled-notice.ts';
import { LocalPositionFeed } from './local-position-feed.ts';

const NOBODY_RECHECK_MS = 1_000;

/**
 * The position feed across processes (`--processes N`, `--roles`, several machines): each committed
 * batch is published on one Redis channel per database, and every process's subscription hands it to
 * its listeners (its own batches included, back from Redis, so every listener sees one order). Pub/sub
 * delivers at most once: a process that is disconnected from Redis misses what was published meanwhile
 * (its streams' clients read the position history; see docs/events.md).
 */
export class RedisPositionFeed implements PositionFeed {
  private readonly local: LocalPositionFeed;
  private readonly notice: ThrottledNotice;
  private subscriber: RedisClient | undefined;
  private subscribing: Promise<void> | undefined;
  private nobodyUntil = 0;
  /**
   * On a Redis Cluster, PUBLISH reaches every node's subscribers but counts only those of the node it
   * was sent to, so a 0 there does not mean nobody listens: every batch is published.
   */
  private readonly receiversCounted: boolean;

  constructor(
    private readonly redis: RedisClient,
    private readonly log: Logger,
    private readonly channel: string,
  ) {
    this.receiversCounted = !isCluster(redis);
    this.notice = new ThrottledNotice(log, 60_000);
    this.local = new LocalPositionFeed((error) => log.error('position feed listener failed', { error: error.stack ?? error.message }));
  }

  wanted(): boolean {
    return Date.now() >= this.nobodyUntil;
  }

  publish(fixes: readonly FeedFix[]): void {
    // While no process listens (no stream has asked for positions), a batch is not even encoded; the
    // publish that found nobody is tried again a second later.
    if (fixes.length === 0 || Date.now() < this.nobodyUntil) return;
    this.redis.publish(this.channel, JSON.stringify(fixes)).then(
      (receivers) => {
        if (receivers === 0 && this.receiversCounted) this.nobodyUntil = Date.now() + NOBODY_RECHECK_MS;
      },
      (error: Error) => this.notice.warn('publish', 'cannot publish positions to Redis; streams of vehicle.position miss them', { error: error.message }),
    );
  }

  subscribe(listener: (fixes: readonly FeedFix[]) => void): () => void {
    const unsubscribe = this.local.subscribe(listener);
    this.subscribing ??= this.listen();
    return unsubscribe;
  }

  /** Resolves once this process receives the channel (a test or a bench waits for it). */
  ready(): Promise<void> {
    return (this.subscribing ??= this.listen());
  }

  private async listen(): Promise<void> {
    const subscriber = this.redis.duplicate();
    this.subscriber = subscriber;
    subscriber.on('error', (error: Error) => this.notice.warn('subscribe', 'position feed lost Redis; reconnecting', { error: error.message }));
    subscriber.on('message', (_channel: string, message: string) => {
      if (this.local.subscribers === 0) return;
      let fixes: FeedFix[];
      try {
        fixes = JSON.parse(message) as FeedFix[];
      } catch {
        return;
      }
      this.local.publish(fixes);
    });
    await subscriber.subscribe(this.channel);
  }

  close(): void {
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }
}
