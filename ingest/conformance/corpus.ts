import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { newSession, type DecodedFrame, type DecodedPosition, type Protocol } from '../protocol.ts';
import { cutFrame } from '../frame-cutter.ts';

/**
 * Replays the conformance corpus (real device captures with expected decodings, from Traccar's
 * protocol tests; see corpus/README.md beside this file) through our framers and decoders.
 */

export interface CorpusSample {
  protocol: string;
  source_test: string;
  test_method: string;
  order: number;
  transport: string;
  helper: 'binary' | 'buffer' | 'text';
  payload: string;
  payload_encoding: 'hex' | 'text';
  verify: string;
  expected: Record<string, unknown> | null;
  kind: 'packet' | 'frame';
  line: number;
  disabled: boolean;
  decoder_state: Record<string, unknown> | null;
}

/** A sample we knowingly read differently, with the reason; listed in the protocol's corpus test. */
export interface KnownDeviation {
  test_method: string;
  order: number;
  reason: string;
}

// The corpus is bundled in ingest/conformance/corpus/ (with its provenance), so every clone runs the
// same conformance set; FLEETCORE_CORPUS points at another copy.
// Two files: the first set's six protocols and the second set's seven; FLEETCORE_CORPUS (a comma-separated list) replaces both.
const BUNDLED = ['corpus/traccar-protocol-samples.json', 'corpus/traccar-protocol-samples-2.json'].map((f) => resolve(import.meta.dirname, f));
const CORPORA = process.env.FLEETCORE_CORPUS ? process.env.FLEETCORE_CORPUS.split(',') : BUNDLED;

let all: CorpusSample[] | undefined;

export function corpusSamples(protocol: string): CorpusSample[] {
  if (!all) {
    for (const file of CORPORA) {
      if (!existsSync(file)) throw new Error(`conformance corpus not found at ${file}; set FLEETCORE_CORPUS to the corpus files, comma-separated`);
    }
    all = CORPORA.flatMap((file) => JSON.parse(readFileSync(file, 'utf8')) as CorpusSample[]);
  }
  return all.filter((s) => s.protocol === protocol);
}

export function sampleBytes(sample: { payload: string; payload_encoding: string }): Uint8Array {
  return sample.payload_encoding === 'hex' ? Buffer.from(sample.payload, 'hex') : Buffer.from(sample.payload, 'latin1');
}

/** Samples grouped per test method, in order: each group is replayed through one decoder session. */
export function sampleGroups(samples: CorpusSample[]): CorpusSample[][] {
  const groups = new Map<string, CorpusSample[]>();
  for (const s of samples) {
    const key = `${s.source_test}#${s.test_method}`;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  return [...groups.values()].map((g) => g.sort((a, b) => a.order - b.order));
}

const KNOTS_PER_KMH = 1 / 1.852;

function sane(p: DecodedPosition): string | undefined {
  const t = p.fixTime.getTime();
  if (!(t > Date.UTC(1999, 11, 31)) || t > Date.now() + 25 * 3_600_000) return `fix time ${p.fixTime.toISOString()} out of range`;
  if (!(Math.abs(p.latitude) <= 90) || !(Math.abs(p.longitude) <= 180)) return `coordinates ${p.latitude},${p.longitude} out of range`;
  if (p.altitude !== undefined && !(p.altitude >= -12262 && p.altitude <= 18000)) return `altitude ${p.altitude} out of range`;
  if (p.speedKmh !== undefined && !(p.speedKmh >= 0 && p.speedKmh * KNOTS_PER_KMH <= 869)) return `speed ${p.speedKmh} out of range`;
  if (p.heading !== undefined && !(p.heading >= 0 && p.heading <= 360)) return `heading ${p.heading} out of range`;
  return undefined;
}

/** Position fields that the corpus names as if they were attributes. */
function attributeOf(p: DecodedPosition, name: string): unknown {
  switch (name) {
    case 'speed':
      return p.speedKmh === undefined ? undefined : p.speedKmh * KNOTS_PER_KMH;
    case 'course':
      return p.heading;
    case 'altitude':
      return p.altitude;
    default:
      return p.attributes[name];
  }
}

function sameValue(actual: unknown, expected: unknown): boolean {
  if (typeof expected === 'number' && typeof actual === 'number') return Math.abs(actual - expected) <= 1e-6 * Math.max(1, Math.abs(expected));
  return actual === expected;
}

/** What is wrong with our reading of one packet sample, or undefined when it meets the corpus. */
export function checkPacket(sample: CorpusSample, outcome: DecodedFrame | Error): string | undefined {
  if (outcome instanceof Error) return `decoder threw ${outcome.name}: ${outcome.message}`;
  const positions = outcome.positions;
  // What the corpus calls a position may be telemetry without a fix (a command result, a
  // heartbeat): we carry those as reports, which the checks that skip location accept too.
  const records: Array<{ attributes: Record<string, unknown> }> = [...positions, ...(outcome.reports ?? [])];
  const expected = sample.expected ?? {};
  switch (sample.verify) {
    case 'verifyNull':
      return records.length === 0 ? undefined : `expected nothing, got ${records.length} record(s)`;
    case 'verifyNotNull':
      return records.length > 0 ? undefined : 'expected a position or report, got nothing';
    case 'verifyPosition':
    case 'verifyPositions': {
      if (expected.check_location === false && records.length > 0) return undefined;
      if (positions.length === 0) return 'expected a position, got none';
      if (sample.verify === 'verifyPosition' && positions.length !== 1) return `expected one position, got ${positions.length}`;
      if (expected.check_location !== false) {
        for (const p of positions) {
          const problem = sane(p);
          if (problem) return problem;
        }
      }
      const first = positions[0]!;
      if (typeof expected.time === 'string' && first.fixTime.toISOString() !== expected.time) {
        return `time ${first.fixTime.toISOString()} != ${expected.time}`;
      }
      if (typeof expected.valid === 'boolean' && first.valid !== expected.valid) return `valid ${first.valid} != ${expected.valid}`;
      if (typeof expected.lat === 'number' && Math.abs(first.latitude - expected.lat) > 1e-5) return `lat ${first.latitude} != ${expected.lat}`;
      if (typeof expected.lon === 'number' && Math.abs(first.longitude - expected.lon) > 1e-5) return `lon ${first.longitude} != ${expected.lon}`;
      return undefined;
    }
    case 'verifyAttributes':
      if (records.length === 0) return 'expected a position or report with attributes, got none';
      return Object.keys(records[0]!.attributes).length > 0 ? undefined : 'expected attributes, got none';
    case 'verifyAttribute': {
      if (records.length === 0) return 'expected a position or report, got none';
      const name = String(expected.attribute);
      const first = records[0]!;
      const actual = 'fixTime' in first ? attributeOf(first as DecodedPosition, name) : first.attributes[name];
      if (expected.value === null) return actual === undefined ? undefined : `${name} should be absent, is ${String(actual)}`;
      return sameValue(actual, expected.value) ? undefined : `${name} = ${JSON.stringify(actual)}, expected ${JSON.stringify(expected.value)}`;
    }
    default:
      return `unknown verify kind ${sample.verify}`;
  }
}

/** What is wrong with our framing of one frame sample (the first whole frame in its bytes). */
export function checkFrame(protocol: Protocol, sample: CorpusSample): string | undefined {
  let bytes = sampleBytes(sample);
  for (let guard = 0; guard < 64; guard++) {
    const result = cutFrame(protocol, bytes);
    if (result.kind === 'skip') {
      bytes = bytes.subarray(result.consumed);
      continue;
    }
    if (result.kind !== 'frame') return `framer answered ${result.kind}`;
    const expected = sampleBytes({ payload: String(sample.expected?.frame), payload_encoding: String(sample.expected?.frame_encoding) });
    return Buffer.from(result.frame).equals(Buffer.from(expected)) ? undefined : `frame ${Buffer.from(result.frame).toString('hex')} != ${Buffer.from(expected).toString('hex')}`;
  }
  return 'framer never produced a frame';
}

export interface ReplayFailure {
  sample: CorpusSample;
  problem: string;
}

/**
 * Replays every enabled sample of `protocol` the way the corpus prescribes (per test method, in
 * order, one session each; decoder_state applied as it appears) and returns what did not match.
 */
export function replayCorpus(
  protocol: Protocol,
  applyState?: (session: ReturnType<typeof newSession>, state: Record<string, unknown>) => void,
  /** The corpus's name for the samples, when it files them apart from the protocol (gl200's binary reports as `gl200bin`). */
  corpusName = protocol.name,
): ReplayFailure[] {
  const failures: ReplayFailure[] = [];
  for (const group of sampleGroups(corpusSamples(corpusName).filter((s) => !s.disabled))) {
    const session = newSession();
    for (const sample of group) {
      if (sample.decoder_state && applyState) applyState(session, sample.decoder_state);
      let problem: string | undefined;
      if (sample.kind === 'frame') problem = checkFrame(protocol, sample);
      else {
        let outcome: DecodedFrame | Error;
        try {
          outcome = protocol.decode(sampleBytes(sample), session);
        } catch (error) {
          outcome = error as Error;
        }
        problem = checkPacket(sample, outcome);
      }
      if (problem) failures.push({ sample, problem });
    }
  }
  return failures;
}
