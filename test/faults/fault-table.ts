import type { RunResult } from './fleet-run.ts';
import { unmatched } from './run-record.ts';

export interface FaultRow {
  fault: string;
  ackedLost: number | string;
  /** Positions stored twice, and events too many (logged twice, or not in the baseline). */
  duplicates: string;
  missingEvents: number | string;
  undeliveredWebhooks: number | string;
  firstAck: string;
  caughtUp: string;
  api: string;
  note: string;
  /** For the artifact: how each stage caught up, and what shows the fault happened. */
  detail: string;
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
    duplicates: `${run.positions.repeated} / ${Math.max(run.duplicateKeys.length, extra.length)}`,
    missingEvents: missing.length,
    undeliveredWebhooks: run.undelivered.length,
    firstAck: seconds(run.recovery.firstAckMs),
    caughtUp: seconds(run.recovery.caughtUpMs),
    api: seconds(run.recovery.apiMs),
    note: problems.length > 0 ? problems.join('; ') : `${run.acked} fixes ACKed, ${run.keys.length} events compared, ${run.receiver.delivered} delivered`,
    detail: [
      `caught up: fixes ACKed ${seconds(run.recovery.stagesMs.acked)}, evaluated ${seconds(run.recovery.stagesMs.evaluated)}, events delivered ${seconds(run.recovery.stagesMs.delivered)}`,
      `fault ${seconds(run.window.end - run.window.start)} long${run.window.note ? ` (${run.window.note})` : ''}`,
      `${run.trackers.reduce((n, t) => n + t.reconnects, 0)} tracker reconnects`,
      `${run.api.failed} of ${run.api.failed + run.api.ok} API requests failed`,
      `webhook: ${run.receiver.requests} requests for ${run.receiver.delivered} events (${run.receiver.stalled} held, ${run.receiver.refusals} refused, ${run.receiver.abandoned} abandoned by their sender)`,
      `${run.events.length - run.keys.length} server-time events not compared`,
      `run ${seconds(run.durationMs)}`,
    ].join('; '),
  };
}

export function failedRow(fault: string, error: unknown): FaultRow {
  const message = (error as Error).message?.split('\n')[0] ?? String(error);
  return { fault, ackedLost: '?', duplicates: '?', missingEvents: '?', undeliveredWebhooks: '?', firstAck: '-', caughtUp: '-', api: '-', note: `run failed: ${message}`, detail: message };
}

/** The suite's one table, as Markdown. */
export function faultTable(rows: FaultRow[]): string {
  const head = ['fault', 'ACKed fixes lost', 'duplicates (fixes / events)', 'missing events', 'undelivered webhooks', 'first ACK after', 'caught up after', 'API answers after', 'run'];
  const lines = [head, head.map(() => '---'), ...rows.map((r) => [r.fault, r.ackedLost, r.duplicates, r.missingEvents, r.undeliveredWebhooks, r.firstAck, r.caughtUp, r.api, r.note].map(String))];
  return lines.map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}
