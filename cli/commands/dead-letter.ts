import { listDeadLetters, markDeadLetterReplayed, recordDeadLetterFailure, type DeadLetter } from '../../db/dead-letters.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { fixBatchWriter } from '../../db/fix-batch-writer.ts';
import { sqlState } from '../../db/write-failure.ts';
import { optionalString, parseCommand, positiveInteger } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';

export const deadLetterUsage = [
  'fleet dead-letter list [--imei IMEI] [--replayed] [--limit 100] [--json]',
  'fleet dead-letter replay ID[,ID...] | --all [--json]',
].join('\n       ');

const describeRecord = (l: DeadLetter) =>
  l.record.kind === 'fix'
    ? `fix at ${l.record.fix.fixTime.toISOString()} (${l.record.fix.latitude}, ${l.record.fix.longitude})`
    : `report at ${(l.record.report.time ?? l.record.report.receivedAt).toISOString()}`;

const asJson = (l: DeadLetter) => ({
  id: l.id, imei: l.imei, protocol: l.protocol, record: l.record, frame: l.frameHex, error: l.error, sqlstate: l.sqlstate,
  createdAt: l.createdAt.toISOString(), replayedAt: l.replayedAt?.toISOString() ?? null,
});

async function list(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, { imei: { type: 'string' }, replayed: { type: 'boolean', default: false }, limit: { type: 'string' } });
  const limit = positiveInteger(optionalString(parsed, 'limit') ?? '100', '--limit');
  const letters = await withDatabase(config, ({ db }) =>
    listDeadLetters(db, { imei: optionalString(parsed, 'imei'), includeReplayed: parsed.values.replayed === true, limit }),
  );
  printResult(
    parsed.json,
    letters.map(asJson),
    letters.length === 0
      ? 'no dead letters'
      : letters.map((l) => `${l.id}  ${l.createdAt.toISOString()}  ${l.imei ?? '?'} ${l.protocol ?? ''}  ${describeRecord(l)}  ${l.sqlstate ?? ''} ${l.error}${l.replayedAt ? `  (replayed ${l.replayedAt.toISOString()})` : ''}`),
  );
}

function parseIds(raw: string): number[] {
  return raw.split(',').map((id) => positiveInteger(id.trim(), 'dead letter id'));
}

/**
 * Writes dead letters again through the same batch writer as ingest, one record at a time, after the
 * operator fixed what refused them (a constraint, a column type). A record refused again keeps its
 * place with the new error; one stored is marked replayed.
 */
async function replay(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, { all: { type: 'boolean', default: false } }, true);
  const all = parsed.values.all === true;
  if (all === (parsed.positionals.length > 0) || parsed.positionals.length > 1) throw new UsageError(`give dead letter ids or --all\nusage: fleet dead-letter replay ID[,ID...] | --all`);
  const ids = all ? undefined : parseIds(parsed.positionals[0]!);
  const outcome = await withDatabase(config, async (handle) => {
    const letters = await listDeadLetters(handle.db, { ids, limit: 100_000 });
    const missing = (ids ?? []).filter((id) => !letters.some((l) => l.id === id));
    if (missing.length > 0) throw new DomainError('not_found', `no dead letter waiting with id ${missing.join(', ')} (fleet dead-letter list --replayed shows replayed ones)`);
    const write = fixBatchWriter(handle);
    const replayed: number[] = [];
    const failed: Array<{ id: number; error: string }> = [];
    for (const letter of letters) {
      try {
        if (letter.record.kind === 'fix') await write([letter.record.fix], []);
        else await write([], [letter.record.report]);
        await markDeadLetterReplayed(handle.db, letter.id);
        replayed.push(letter.id);
      } catch (error) {
        await recordDeadLetterFailure(handle.db, letter.id, (error as Error).message, sqlState(error) ?? null);
        failed.push({ id: letter.id, error: (error as Error).message });
      }
    }
    return { replayed, failed };
  });
  printResult(parsed.json, outcome, [
    `${outcome.replayed.length} replayed${outcome.replayed.length > 0 ? `: ${outcome.replayed.join(', ')}` : ''}`,
    ...outcome.failed.map((f) => `${f.id} refused again: ${f.error}`),
  ]);
  if (outcome.failed.length > 0) process.exitCode = 1;
}

export async function deadLetterCommand(config: Config, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  if (action === 'list') return list(config, rest);
  if (action === 'replay') return replay(config, rest);
  throw new UsageError(`usage: ${deadLetterUsage}`);
}
