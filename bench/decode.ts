import { corpusSamples, sampleBytes } from '../ingest/conformance/corpus.ts';
import { TRACKER_PROTOCOLS } from '../ingest/protocol-catalog.ts';
import { newSession, type Protocol } from '../ingest/protocol.ts';
import { teltonika } from '../ingest/protocols/teltonika/teltonika.ts';
import { teltonikaCodec8, teltonikaLogin, type SimulatedFix } from '../simulators/teltonika-packets.ts';

const DURATION_MS = 2_000;
const RUNS = 3;

interface Row {
  protocol: string;
  input: string;
  framesPerSec: number;
  recordsPerSec: number;
}

/** Frames through framer + decoder for DURATION_MS, RUNS times; reports the best run (least disturbed). */
function measure(protocol: Protocol, frames: Uint8Array[], prepare: (session: ReturnType<typeof newSession>) => void): { frames: number; records: number } {
  let best = { frames: 0, records: 0 };
  for (let run = 0; run < RUNS; run++) {
    const session = newSession();
    prepare(session);
    let count = 0;
    let records = 0;
    const start = performance.now();
    const end = start + DURATION_MS;
    while (performance.now() < end) {
      for (let i = 0; i < frames.length; i++) {
        const cut = protocol.nextFrame(frames[i]!);
        if (cut.kind !== 'frame') continue;
        try {
          const decoded = protocol.decode(cut.frame, session);
          records += decoded.positions.length + (decoded.reports?.length ?? 0);
          count++;
        } catch {
          // A capture that needs another model setting than the workload's session; not counted.
        }
      }
    }
    const seconds = (performance.now() - start) / 1000;
    if (count / seconds > best.frames) best = { frames: count / seconds, records: records / seconds };
  }
  return best;
}

/**
 * Decode throughput per protocol on one core: framer + decoder over real captures from the corpus
 * (those that decode without error), and for Teltonika also a typical 10-record Codec 8 packet.
 */
export default async function decodeBench(args: string[]): Promise<void> {
  const rows: Row[] = [];
  const fixes: SimulatedFix[] = Array.from({ length: 10 }, (_, i) => ({
    time: new Date(Date.UTC(2024, 4, 1, 12, 0, i * 10)), latitude: 19.4 + i / 1000, longitude: -99.1, speedKmh: 40, heading: 90, satellites: 9, ignition: true,
  }));
  const codec8 = teltonikaCodec8(fixes);
  const r = measure(teltonika, [codec8], (s) => teltonika.decode(teltonikaLogin('356307042441013'), s));
  rows.push({ protocol: 'teltonika', input: 'Codec 8, 10 records', framesPerSec: Math.round(r.frames), recordsPerSec: Math.round(r.records) });

  for (const { protocol } of TRACKER_PROTOCOLS) {
    const frames: Uint8Array[] = [];
    const session = newSession();
    for (const sample of corpusSamples(protocol.name)) {
      if (sample.kind !== 'packet' || sample.disabled) continue;
      const bytes = sampleBytes(sample);
      try {
        const cut = protocol.nextFrame(bytes);
        if (cut.kind !== 'frame') continue;
        protocol.decode(cut.frame, session);
        frames.push(cut.frame);
      } catch {
        // A capture we refuse (see the corpus tests) is not part of the workload.
      }
    }
    const m = measure(protocol, frames, (s) => {
      s.deviceId = session.deviceId ?? '356307042441013';
      Object.assign(s.options, session.options);
    });
    rows.push({ protocol: protocol.name, input: `${frames.length} corpus captures`, framesPerSec: Math.round(m.frames), recordsPerSec: Math.round(m.records) });
  }
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else {
    process.stdout.write(`Decode throughput on one core (framer + decoder), best of ${RUNS} × ${DURATION_MS / 1000} s\n`);
    console.table(rows);
  }
}
