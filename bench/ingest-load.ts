import { summarise } from '../simulators/latency-stats.ts';
import { startFleetSimulation } from '../simulators/fleet-simulation.ts';
import { simulatedImei } from '../simulators/simulated-devices.ts';
import { TRACKER_DIALECTS } from '../simulators/tracker-dialect.ts';

/**
 * The load side of `bench ingest`, in its own process so the trackers' work does not share the
 * server's event loop: argv = port devices intervalMs recordsPerUpload durationMs warmupMs seed protocol.
 * Rates and latencies cover the steady window after the warm-up (connections and logins spread over
 * the first period). Prints one JSON line.
 */
const [port, devices, intervalMs, recordsPerUpload, durationMs, warmupMs, seed] = process.argv.slice(2, 9).map(Number) as number[] as [
  number, number, number, number, number, number, number,
];
const protocol = process.argv[9] ?? 'teltonika';
const dialect = TRACKER_DIALECTS[protocol];
if (!dialect) throw new Error(`no simulated ${protocol} trackers (there are: ${Object.keys(TRACKER_DIALECTS).join(', ')})`);
const imeis = Array.from({ length: devices }, (_, i) => simulatedImei(seed, i));
const trackers = startFleetSimulation({
  imeis, dialect, server: { host: '127.0.0.1', port }, intervalMs, recordsPerUpload, seed, stops: [],
  center: { latitude: 19.43, longitude: -99.13 },
});
const acknowledged = () => trackers.reduce((n, t) => n + t.stats.acknowledged, 0);
await new Promise((r) => setTimeout(r, warmupMs));
for (const t of trackers) t.stats.ackLatencies.length = 0;
const ackedAtWarmup = acknowledged();
const steadyStart = performance.now();
const cpuAtWarmup = process.cpuUsage();
// The window's edges, for a bench that samples other processes' CPU over the same seconds.
process.stdout.write('window start\n');
await new Promise((r) => setTimeout(r, durationMs - warmupMs));
const steadyAcked = acknowledged() - ackedAtWarmup;
const steadySeconds = (performance.now() - steadyStart) / 1000;
const cpu = process.cpuUsage(cpuAtWarmup);
process.stdout.write('window end\n');
const latency = summarise(trackers.flatMap((t) => t.stats.ackLatencies));
await Promise.all(trackers.map((t) => t.stop(20_000)));
process.stdout.write(
  `${JSON.stringify({
    generated: trackers.reduce((n, t) => n + t.stats.generated, 0),
    acknowledged: acknowledged(),
    ackedPerSec: steadyAcked / steadySeconds,
    steadyAcked,
    steadySeconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    refused: trackers.filter((t) => t.stats.refused).length,
    p50: latency.p50,
    p99: latency.p99,
  })}\n`,
);
process.exit(0);
