export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

/** Percentiles of a set of latencies in ms (nearest-rank). */
export function summarise(samples: number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
  const mean = sorted.reduce((s, v) => s + v, 0) / Math.max(1, sorted.length);
  return { count: sorted.length, p50: rank(50), p99: rank(99), max: sorted[sorted.length - 1] ?? 0, mean };
}
