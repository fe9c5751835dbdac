import type { CommandType } from './command-catalog.ts';

export const SLOW_DOWN_REASON = 'waiting for the vehicle to slow down';

/**
 * Cutting the engine of a vehicle at speed takes its power steering and brake assist away, so an
 * `engine_stop` waits (queued, with this reason) while the vehicle's last fix is above the
 * threshold, and goes once a fix at or below it arrives. `params.force: true` sends it regardless,
 * for the dispatcher who has decided that is safer. A vehicle with no fix yet is not held.
 */
export function safeStopHold(
  command: { type: CommandType; params: Record<string, unknown> },
  lastSpeedKmh: number | null,
  thresholdKmh: number,
): string | null {
  if (command.type !== 'engine_stop' || command.params.force === true) return null;
  return lastSpeedKmh !== null && lastSpeedKmh > thresholdKmh ? SLOW_DOWN_REASON : null;
}
