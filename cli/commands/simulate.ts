import { summarise } from '../../simulators/latency-stats.ts';
import { findAccount } from '../../db/accounts.ts';
import { DomainError } from '../../domain/domain-error.ts';
import { startFleetSimulation } from '../../simulators/fleet-simulation.ts';
import { ensureSimulatedDevices, geofenceStops } from '../../simulators/simulated-devices.ts';
import { TRACKER_DIALECTS } from '../../simulators/tracker-dialect.ts';
import { optionalString, parseCommand, positiveInteger, requiredString } from '../command-line.ts';
import type { Config } from '../config.ts';
import { printResult } from '../output.ts';
import { UsageError } from '../usage-error.ts';
import { withDatabase } from '../with-database.ts';

export const simulateUsage =
  'fleet simulate --account ID [--devices 10] [--interval 5] [--duration 60] [--seed 1] [--protocol teltonika|gt06|gps103|jt808] [--host 127.0.0.1] [--port PORT] [--json]';

const DIALECTS = TRACKER_DIALECTS;
const MEXICO_CITY = { latitude: 19.4326, longitude: -99.1332 };

/**
 * Virtual trackers over real TCP against a running server: they register in the account if needed,
 * drive between its geofences, report every interval, and resend what is not acknowledged.
 */
export async function simulateCommand(config: Config, argv: string[]): Promise<void> {
  const parsed = parseCommand(argv, {
    account: { type: 'string' },
    devices: { type: 'string' },
    interval: { type: 'string' },
    duration: { type: 'string' },
    seed: { type: 'string' },
    protocol: { type: 'string' },
    host: { type: 'string' },
    port: { type: 'string' },
  });
  const accountId = positiveInteger(requiredString(parsed, 'account'), '--account');
  const count = positiveInteger(optionalString(parsed, 'devices') ?? '10', '--devices');
  const intervalS = Number(optionalString(parsed, 'interval') ?? '5');
  if (!(intervalS >= 0.05 && intervalS <= 3600)) throw new UsageError('--interval must be 0.05 to 3600 seconds');
  const durationS = positiveInteger(optionalString(parsed, 'duration') ?? '60', '--duration');
  const seed = positiveInteger(optionalString(parsed, 'seed') ?? '1', '--seed');
  const protocol = optionalString(parsed, 'protocol') ?? 'teltonika';
  const dialect = DIALECTS[protocol];
  if (!dialect) throw new UsageError(`--protocol must be one of ${Object.keys(DIALECTS).join(', ')}`);
  const port = positiveInteger(optionalString(parsed, 'port') ?? String(config.trackerPorts[protocol] ?? 0), '--port');
  const host = optionalString(parsed, 'host') ?? '127.0.0.1';

  const { imeis, stops } = await withDatabase(config, async ({ db }) => {
    if (!(await findAccount(db, accountId))) throw new DomainError('not_found', `account ${accountId} does not exist`);
    return { imeis: await ensureSimulatedDevices(db, accountId, seed, count, protocol), stops: await geofenceStops(db, accountId) };
  });
  const trackers = startFleetSimulation({ imeis, dialect, server: { host, port }, intervalMs: intervalS * 1000, seed, stops, center: MEXICO_CITY });
  if (!parsed.json) process.stdout.write(`simulating ${count} ${protocol} tracker(s) against ${host}:${port} for ${durationS} s\n`);
  await new Promise((resolve) => setTimeout(resolve, durationS * 1000));
  await Promise.all(trackers.map((t) => t.stop()));

  const latency = summarise(trackers.flatMap((t) => t.stats.ackLatencies));
  const totals = {
    devices: count,
    generated: trackers.reduce((n, t) => n + t.stats.generated, 0),
    acknowledged: trackers.reduce((n, t) => n + t.stats.acknowledged, 0),
    unacknowledged: trackers.reduce((n, t) => n + t.pending, 0),
    refused: trackers.filter((t) => t.stats.refused).length,
    reconnects: trackers.reduce((n, t) => n + t.stats.reconnects, 0),
    commandsAnswered: trackers.reduce((n, t) => n + t.stats.commands, 0),
    ackLatencyMs: { p50: +latency.p50.toFixed(1), p99: +latency.p99.toFixed(1) },
  };
  printResult(
    parsed.json,
    totals,
    `${totals.generated} fixes generated, ${totals.acknowledged} acknowledged, ${totals.unacknowledged} not; ACK latency p50 ${totals.ackLatencyMs.p50} ms, p99 ${totals.ackLatencyMs.p99} ms; ${totals.refused} refused, ${totals.reconnects} reconnects; ${totals.commandsAnswered} commands answered`,
  );
}
