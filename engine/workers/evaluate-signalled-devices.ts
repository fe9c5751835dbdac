import type { Db } from '../../db/database.ts';
import type { EngineQueues } from '../engine-queues.ts';
import type { GeofenceCatalog } from '../geofence-catalog.ts';
import type { DeviceLateFixes, LateFixLog } from '../late-fix-log.ts';
import { evaluateDevices, type EvaluationSettings } from './evaluate-devices.ts';
import type { CommittedFixes } from '../committed-fixes.ts';
import { refreshEtas, type EtaRefreshSettings } from './refresh-etas.ts';

/** Devices evaluated per transaction: a signal of thousands is worked through in steps of this many. */
const DEVICES_PER_STEP = 500;

/**
 * The `devices` job: the signalled devices evaluated a step at a time (evaluateDevices: lock, read
 * after the cursor, evaluate, commit), those with fixes still after their cursor put back on their
 * queues, the travels they moved along given fresh ETAs, and the late fixes they met said in the log
 * once for the whole job.
 */
export async function evaluateSignalledDevices(
  deps: { db: Db; catalog: GeofenceCatalog; queues: Pick<EngineQueues, 'signal'>; lateFixLog: LateFixLog; committed?: CommittedFixes },
  settings: { evaluation: EvaluationSettings; eta: EtaRefreshSettings },
  deviceIds: readonly number[],
): Promise<void> {
  const { db, queues } = deps;
  const late: DeviceLateFixes[] = [];
  for (let i = 0; i < deviceIds.length; i += DEVICES_PER_STEP) {
    const outcome = await evaluateDevices(db, deps.catalog, deviceIds.slice(i, i + DEVICES_PER_STEP), settings.evaluation, deps.committed);
    late.push(...outcome.lateByDevice);
    if (outcome.unfinished.length > 0) await queues.signal(outcome.unfinished);
    if (outcome.progressedTravels.length > 0) await refreshEtas(db, settings.eta, outcome.progressedTravels);
  }
  deps.lateFixLog.job(late);
}
