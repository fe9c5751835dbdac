/**
 * Whether a queue backend takes jobs now. `reason` is a few words anyone may read (a readiness probe
 * is public): never a host, an address or the store's own error, which go in `detail`, for the log.
 */
export type QueueHealth = { up: true } | { up: false; reason: string; detail: string };

/**
 * `check` run at most once per `ttlMs`: a readiness probe and a metrics scrape arriving together, or
 * a load balancer probing every second, share one answer instead of each asking the store again.
 */
export function cachedHealth(check: () => Promise<QueueHealth>, ttlMs: number, now: () => number = Date.now): () => Promise<QueueHealth> {
  let last: { at: number; health: Promise<QueueHealth> } | undefined;
  return () => {
    const at = now();
    if (!last || at - last.at >= ttlMs) last = { at, health: check() };
    return last.health;
  };
}
