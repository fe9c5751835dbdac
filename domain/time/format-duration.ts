/** `<h>h <m>m`, whole minutes, hours unbounded (a two-day visit reads `49h 5m`). */
export function formatDuration(ms: number): string {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}
