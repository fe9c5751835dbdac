import type { DecoderSession } from '../../protocol.ts';
import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { gt06 } from './gt06.ts';

/** Corpus `decoder_state.modelOverride` is the operator-configured model the decoder reads. */
function applyState(session: DecoderSession, state: Record<string, unknown>): void {
  if (typeof state.modelOverride === 'string') session.options.model = state.modelOverride;
}

/**
 * Samples we read differently from the reference decoder, each for a stated reason. Keep this
 * short: a sample leaves the list as soon as we can read it for a documented reason.
 */
const KNOWN: KnownDeviation[] = [
  {
    test_method: 'testDecode',
    order: 20,
    reason:
      '0x32 frame: the expected altitude -31703 is the frame CRC (0x8429) read as int16 — the reference reads 4 bytes past the body; we stop at the serial number and report no altitude',
  },
  {
    test_method: 'testDecode',
    order: 26,
    reason: '0x22 with 13 undocumented bytes after ACC/event/re-upload; temp1 0.32 would have to be guessed (0x0020 × 0.01 at end−4) from this single capture',
  },
  {
    test_method: 'testDecode',
    order: 34,
    reason: '0x12 of length 0x29 (no known variant): drivingTime 0 sits in an undocumented trailer; we do not invent its offset from one all-zero capture',
  },
  {
    test_method: 'testDecode',
    order: 43,
    reason: '0x16 whose status block reads status 0x03, alarm byte 0x25: neither maps to tampering in any Concox alarm table we know; expected value not derivable',
  },
];

conformanceSuite(gt06, KNOWN, applyState);
