import { summarise } from './latency-stats.ts';
import { startFleetSimulation } from '../simulators/fleet-simulation.ts';
import { simulatedImei } from '../simulators/simulated-devices.ts';
import { teltonikaDialect } from '../simulators/tracker-dialect.ts';

/**
 * The load side of `bench ingest`, in its own process so the trackers' work does not share the
 * server's event loop: argv = port devices intervalMs durationMs seed. Prints one JSON line.
 */
const [port, devices, intervalMs, durationMs, seed] = process.argv.slice(2).map(Number) as [number, number, number, number, number];
const imeis = Array.from({ length: devices }, (_, i) => simulatedImei(seed, i));
const trackers = startFleetSimulation({
  imeis, dialect: teltonikaDialect, server: { host: '127.0.0.1', port }, intervalMs, seed, stops: [], center: { latitude: 19.43, longitude: -99.13 },
});
await new Promise((r) => setTimeout(r, durationMs));
const stopping = Promise.all(trackers.map((t) => t.stop(20_000)));
await stopping;
const latency = summarise(trackers.flatMap((t) => t.stats.ackLatencies));
process.stdout.write(
  `${JSON.stringify({
    generated: trackers.reduce((n, t) => n + t.stats.generated, 0),
    acknowledged: trackers.reduce((n, t) => n + t.stats.acknowledged, 0),
    refused: trackers.filter((t) => t.stats.refused).length,
    p50: latency.p50,
    p99: latency.p99,
  })}\n`,
);
process.exit(0);
