import type { CommandType } from './command-catalog.ts';

export const SLOW_DOWN_REASON = 'waiting for the vehicle to slow down';
export const CURRENT_FIX_REASON = 'waiting for a current fix from the vehicle';

/** What the rule knows of the vehicle's speed: one fix, as decoded. */
export interface SpeedEvidence {
  speedKmh?: number | null;
  fixTime: Date;
  /** The tracker's own word that the fix is a real GNSS fix (not a last-known position). */
  valid: boolean;
}

export interface SafeStopLimits {
  /** COMMAND_SAFE_STOP_KMH: an engine stop waits while the vehicle is faster than this. */
  thresholdKmh: number;
  /** COMMAND_SAFE_STOP_MAX_FIX_AGE_S, in ms: an older fix says nothing of the speed now. */
  maxFixAgeMs: number;
}

/**
 * Cutting the engine of a vehicle at speed takes its power steering and brake assist away, so an
 * `engine_stop` goes only on evidence that the vehicle is slow now: a valid fix with a speed, at most
 * `maxFixAgeMs` from now, at or below the threshold. The caller passes only a fix that came on the
 * connection the stop would go out on: a fix stored before a tracker lost coverage says nothing of
 * how fast it is when it comes back. Without such a fix the stop waits for one; above the threshold it
 * waits for the vehicle to slow down. A fix stamped far in the future (a tracker with a wrong clock)
 * is no evidence either. `params.force: true` sends it regardless, for the dispatcher who has decided
 * that is safer. Returns why the command must wait, or null when it may go.
 */
export function safeStopHold(
  command: { type: CommandType; params: Record<string, unknown> },
  fix: SpeedEvidence | undefined,
  limits: SafeStopLimits,
  now: number = Date.now(),
): string | null {
  if (command.type !== 'engine_stop' || command.params.force === true) return null;
  if (!fix || !fix.valid || typeof fix.speedKmh !== 'number' || Math.abs(now - fix.fixTime.getTime()) > limits.maxFixAgeMs) {
    return CURRENT_FIX_REASON;
  }
  return fix.speedKmh > limits.thresholdKmh ? SLOW_DOWN_REASON : null;
}

/** Of a batch of fixes, the newest by fix time: the one that speaks for the vehicle now. */
export function newestFix<T extends SpeedEvidence>(fixes: readonly T[], current?: SpeedEvidence): SpeedEvidence | undefined {
  let newest = current;
  for (const fix of fixes) if (!newest || fix.fixTime > newest.fixTime) newest = fix;
  return newest;
}
