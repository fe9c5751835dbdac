import { corpusSamples, sampleBytes } from '../ingest/conformance/corpus.ts';
import { TRACKER_PROTOCOLS } from '../ingest/protocol-catalog.ts';
import { newSession, type DecoderSession, type Protocol } from '../ingest/protocol.ts';
import { gl200 } from '../ingest/protocols/gl200/gl200.ts';
import { gt06 } from '../ingest/protocols/gt06/gt06.ts';
import { teltonika } from '../ingest/protocols/teltonika/teltonika.ts';
import { teltonikaCodec8, teltonikaLogin, type SimulatedFix } from '../simulators/teltonika-packets.ts';
import { cutFrame } from '../ingest/frame-cutter.ts';

const DURATION_MS = 1_000;
const RUNS = 5;
/** Frames decoded between two looks at the clock, so reading the clock stays out of the figure. */
const MIN_BATCH = 64;

interface Row {
  protocol: string;
  input: string;
  framesPerSec: number;
  recordsPerSec: number;
  /** Spread of records/s over the runs (standard deviation / mean). */
  spread: string;
}

interface Run {
  frames: number;
  records: number;
}

/**
 * Frames through framer + decoder for DURATION_MS, RUNS times; reports the best run (least
 * disturbed) and the spread of all runs. Rates are per second of the process's CPU time, not of the
 * clock: on a machine shared with test suites and servers, time spent descheduled is not decoding
 * time. (GC helper threads count, as they work for the decoder; on an idle machine both agree.)
 */
function measure(protocol: Protocol, frames: Uint8Array[], prepare: (session: DecoderSession) => void): Run & { spread: number } {
  const repeats = Math.ceil(MIN_BATCH / frames.length);
  const runs: Run[] = [];
  for (let run = 0; run < RUNS; run++) {
    const session = newSession();
    prepare(session);
    let count = 0;
    let records = 0;
    const cpuStart = process.cpuUsage();
    const end = performance.now() + DURATION_MS;
    while (performance.now() < end) {
      for (let repeat = 0; repeat < repeats; repeat++) {
        for (let i = 0; i < frames.length; i++) {
          const cut = cutFrame(protocol, frames[i]!);
          if (cut.kind !== 'frame') continue;
          try {
            const decoded = protocol.decode(cut.frame, session);
            records += decoded.positions.length + (decoded.reports?.length ?? 0);
            count++;
          } catch {
            // Not reached: the workload holds only frames its session decodes.
          }
        }
      }
    }
    const cpu = process.cpuUsage(cpuStart);
    const seconds = (cpu.user + cpu.system) / 1e6;
    runs.push({ frames: count / seconds, records: records / seconds });
  }
  const best = runs.reduce((a, b) => (b.frames > a.frames ? b : a));
  const mean = runs.reduce((sum, r) => sum + r.records, 0) / runs.length;
  const sd = Math.sqrt(runs.reduce((sum, r) => sum + (r.records - mean) ** 2, 0) / runs.length);
  return { ...best, spread: mean > 0 ? sd / mean : 0 };
}

function row(protocol: string, input: string, m: Run & { spread: number }): Row {
  return { protocol, input, framesPerSec: Math.round(m.frames), recordsPerSec: Math.round(m.records), spread: `±${(m.spread * 100).toFixed(1)}%` };
}

/** Line endings a text protocol's framer may wait for; corpus captures of some protocols come without theirs. */
const LINE_ENDINGS = ['', '\r\n', '\n', '\r'].map((ending) => Buffer.from(ending));

/** The capture as one whole frame its framer cuts, with the line ending it was captured without; undefined if none makes one. */
function framed(protocol: Protocol, bytes: Uint8Array): { input: Uint8Array; frame: Uint8Array } | undefined {
  for (const ending of LINE_ENDINGS) {
    const input = Uint8Array.from(Buffer.concat([bytes, ending]));
    const cut = cutFrame(protocol, input);
    if (cut.kind === 'frame' && cut.consumed === input.length) return { input, frame: cut.frame };
  }
  return undefined;
}

/**
 * Corpus captures `protocol` decodes, as the session the corpus leaves (identified, its options set)
 * reads them. Captures it refuses are left out: a throw costs time that no record would account for.
 */
function corpusWorkload(
  protocol: Protocol,
  accept: (frame: Uint8Array) => boolean = () => true,
  corpusName = protocol.name,
): { frames: Uint8Array[]; prepare: (session: DecoderSession) => void } {
  const candidates: Array<{ input: Uint8Array; frame: Uint8Array }> = [];
  const replay = newSession();
  for (const sample of corpusSamples(corpusName)) {
    if (sample.kind !== 'packet' || sample.disabled) continue;
    const cut = framed(protocol, sampleBytes(sample));
    if (!cut || !accept(cut.frame)) continue;
    candidates.push(cut);
    try {
      protocol.decode(cut.frame, replay); // logins and options set the session up, as on a connection
    } catch {
      // Refused here, and checked again below against the final session.
    }
  }
  const prepare = (session: DecoderSession) => {
    session.deviceId = replay.deviceId ?? '356307042441013';
    Object.assign(session.options, structuredClone(replay.options));
  };
  const frames = candidates
    .filter(({ frame }) => {
      const session = newSession();
      prepare(session);
      try {
        protocol.decode(frame, session);
        return true;
      } catch {
        return false;
      }
    })
    .map(({ input }) => input);
  return { frames, prepare };
}

/**
 * Decode throughput per protocol on one core: framer + decoder over real captures from the corpus
 * (those that decode without error), and the typical position traffic of the two most common
 * protocols: 10-record Teltonika Codec 8 packets, and GT06 0x12/0x22 location messages. The corpus
 * rows mix in logins, heartbeats, command answers and rare vendor messages, one of each kind.
 */
export default async function decodeBench(args: string[]): Promise<void> {
  const rows: Row[] = [];
  const fixes: SimulatedFix[] = Array.from({ length: 10 }, (_, i) => ({
    time: new Date(Date.UTC(2024, 4, 1, 12, 0, i * 10)), latitude: 19.4 + i / 1000, longitude: -99.1, speedKmh: 40, heading: 90, satellites: 9, ignition: true,
  }));
  const codec8 = teltonikaCodec8(fixes);
  rows.push(row('teltonika', 'Codec 8, 10 records', measure(teltonika, [codec8], (s) => teltonika.decode(teltonikaLogin('356307042441013'), s))));

  // Real 0x12 (GPS + LBS) and 0x22 (GPS + LBS + status) captures, the messages a GT06 fleet mostly sends.
  const location = corpusWorkload(gt06, (frame) => frame[0] === 0x78 && (frame[3] === 0x12 || frame[3] === 0x22));
  rows.push(row('gt06', `${location.frames.length} 0x12/0x22 location captures`, measure(gt06, location.frames, location.prepare)));

  for (const { protocol } of TRACKER_PROTOCOLS) {
    const { frames, prepare } = corpusWorkload(protocol);
    if (frames.length === 0) throw new Error(`no corpus capture of ${protocol.name} frames and decodes: nothing to measure`);
    rows.push(row(protocol.name, `${frames.length} corpus captures`, measure(protocol, frames, prepare)));
  }
  // Queclink's binary reports come to the GL200 port beside its text.
  const binary = corpusWorkload(gl200, undefined, 'gl200bin');
  rows.push(row('gl200 (binary)', `${binary.frames.length} corpus captures`, measure(gl200, binary.frames, binary.prepare)));
  if (args.includes('--json')) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  else {
    process.stdout.write(`Decode throughput on one core (framer + decoder) per CPU second, best of ${RUNS} × ${DURATION_MS / 1000} s\n`);
    console.table(rows);
  }
}
