import type { RunResult } from './fleet-run.ts';
import { unmatched } from './run-record.ts';

export interface FaultRow {
  fault: string;
  ackedLost: number | string;
  duplicateEvents: number | string;
  missingEvents: number | string;
  undeliveredWebhooks: number | string;
  firstAck: string;
  caughtUp: string;
  api: string;
  note: string;
}

const seconds = (ms: number | undefined) => (ms === undefined ? 'never' : `${(ms / 1000).toFixed(1)} s`);

/** A run's row, measured against the baseline run of the same seed. */
export function faultRow(run: RunResult, baseline: RunResult): FaultRow {
  const extra = unmatched(run.keys, baseline.keys);
  const missing = unmatched(baseline.keys, run.keys);
  const problems = [
    ...run.stuck,
    ...(run.crashed.length > 0 ? [`crashed: ${run.crashed.join(', ')}`] : []),
    ...(JSON.stringify(run.travels) === JSON.stringify(baseline.travels) ? [] : ['travels differ from the baseline']),
    ...(run.receiver.badSignatures > 0 ? [`${run.receiver.badSignatures} bad signatures`] : []),
  ];
  return {
    fault: run.fault,
    ackedLost: run.ackedLost.length,
    // Duplicates within the run and events the baseline does not have: both are events too many.
    duplicateEvents: Math.max(run.duplicateKeys.length, extra.length) + run.positions.repeated,
    missingEvents: missing.length,
    undeliveredWebhooks: run.undelivered.length,
    firstAck: seconds(run.recovery.firstAckMs),
    caughtUp: seconds(run.recovery.caughtUpMs),
    api: seconds(run.recovery.apiMs),
    note: problems.length > 0 ? problems.join('; ') : `${run.acked} fixes ACKed, ${run.keys.length} events compared, ${run.receiver.delivered} delivered`,
  };
}

export function failedRow(fault: string, error: unknown): FaultRow {
  const message = (error as Error).message?.split('\n')[0] ?? String(error);
  return { fault, ackedLost: '?', duplicateEvents: '?', missingEvents: '?', undeliveredWebhooks: '?', firstAck: '-', caughtUp: '-', api: '-', note: `run failed: ${message}` };
}

/** The suite's one table, as Markdown. */
export function faultTable(rows: FaultRow[]): string {
  const head = ['fault', 'ACKed fixes lost', 'duplicate events', 'missing events', 'undelivered webhooks', 'first ACK after', 'caught up after', 'API answers after', 'run'];
  const lines = [head, head.map(() => '---'), ...rows.map((r) => [r.fault, r.ackedLost, r.duplicateEvents, r.missingEvents, r.undeliveredWebhooks, r.firstAck, r.caughtUp, r.api, r.note].map(String))];
  return lines.map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}
