import { UsageError } from './usage-error.ts';

/** `--speed-limit`: km/h above 0 (up to 1,000), or `none` to remove a limit. */
export function parseSpeedLimit(raw: string): number | null {
  if (raw === 'none') return null;
  const kmh = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !(kmh > 0) || kmh > 1000) throw new UsageError(`--speed-limit must be km/h from above 0 to 1000, or none, got "${raw}"`);
  return kmh;
}
