import type pg from 'pg';
import { metricsRegistry, prom } from '../runtime/metrics.ts';

const pools = new Set<pg.Pool>();

const sum = (count: (pool: pg.Pool) => number) => [...pools].reduce((total, pool) => total + count(pool), 0);

/** The database connections this process holds, read at scrape time: a saturated pool shows as waiting > 0. */
new prom.Gauge({
  name: 'fleetcore_db_pool_connections',
  help: 'Database connections of this process by state (in use, idle) and queries waiting for one',
  labelNames: ['state'],
  registers: [metricsRegistry],
  collect() {
    this.set({ state: 'in_use' }, sum((p) => p.totalCount - p.idleCount));
    this.set({ state: 'idle' }, sum((p) => p.idleCount));
    this.set({ state: 'waiting' }, sum((p) => p.waitingCount));
  },
});
new prom.Gauge({
  name: 'fleetcore_db_pool_max_connections',
  help: 'Database connections this process may open',
  registers: [metricsRegistry],
  collect() {
    this.set(sum((p) => p.options.max ?? 10));
  },
});

/** Counts `pool` in the exported figures until it is closed. */
export function exportPoolMetrics(pool: pg.Pool): () => void {
  pools.add(pool);
  return () => pools.delete(pool);
}
