/**
 * Where a read that tolerates staleness goes: the rule alone, kept apart from the I/O that measures
 * the replica, so it is tested on numbers. Times are milliseconds on one clock (Date.now()).
 */

/** One measurement of the read replica. */
export interface ReplicaCheck {
  /** When the measurement finished. */
  at: number;
  /** false: the replica could not be reached or is not replaying (the other fields are then undefined). */
  up: boolean;
  /** Everything the primary had committed at this time is on the replica. */
  replayedThrough?: number;
  /** How far behind the primary the replica is: `at - replayedThrough`. */
  lagMs?: number;
}

export interface ReadTargetRule {
  /** READ_REPLICA_MAX_LAG_MS: a replica further behind than this is skipped. */
  maxLagMs: number;
  /** A measurement older than this no longer vouches for the replica (the checker is stuck or slow). */
  maxCheckAgeMs: number;
}

/**
 * `replica` only when the latest measurement is recent, found it up and within the lag limit, and
 * shows that it has replayed this process's latest write (`lastOwnWriteAt`, taken after the commit):
 * a client that has just written through this process reads what it wrote.
 */
export function readTarget(check: ReplicaCheck | undefined, now: number, rule: ReadTargetRule, lastOwnWriteAt = 0): 'replica' | 'primary' {
  if (!check || !check.up || check.lagMs === undefined || check.replayedThrough === undefined) return 'primary';
  if (now - check.at > rule.maxCheckAgeMs) return 'primary';
  if (check.lagMs > rule.maxLagMs) return 'primary';
  if (check.replayedThrough <= lastOwnWriteAt) return 'primary';
  return 'replica';
}

/** A WAL position of the primary and when it was read. */
export interface LsnSample {
  at: number;
  lsn: bigint;
}

/** `16/B374D848` → its 64-bit position. */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match) throw new Error(`not a WAL position: "${text}"`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/**
 * Lag measured by WAL position rather than by the replica's last replayed commit time, which grows
 * on an idle primary with nothing to replay. `samples` are the primary's positions, oldest first,
 * each read before the replica was asked; the replica has everything committed by the newest sample
 * its replay position has reached. Returns that sample's time (undefined when it has reached none),
 * and drops from `samples` those older than it, which no later answer can need.
 */
export function replayedThrough(samples: LsnSample[], replayLsn: bigint): number | undefined {
  let reached = -1;
  for (let i = 0; i < samples.length; i++) if (samples[i]!.lsn <= replayLsn) reached = i;
  if (reached < 0) return undefined;
  const at = samples[reached]!.at;
  samples.splice(0, reached);
  return at;
}
