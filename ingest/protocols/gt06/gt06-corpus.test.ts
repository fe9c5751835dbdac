import type { DecoderSession } from '../../protocol.ts';
import type { KnownDeviation } from '../../conformance/corpus.ts';
import { conformanceSuite } from '../../conformance/protocol-suites.ts';
import { gt06 } from './gt06.ts';

/** Corpus `decoder_state.modelOverride` is the operator-configured model the decoder reads. */
function applyState(session: DecoderSession, state: Record<string, unknown>): void {
  if (typeof state.modelOverride === 'string') session.options.model = state.modelOverride;
}

/**
 * Captures whose CRC-ITU does not match their bytes. They were edited by hand for the original test
 * suite (placeholder IMEIs, alarm codes swapped to test another alarm); where changing back a single
 * byte restores the CRC, the entry says which. We check the CRC, as the Teltonika decoder does, and
 * refuse such a frame (no acknowledgement, so a real device sends it again); the reference decoder
 * does not check it.
 */
const BAD_CRC = "the capture's CRC-ITU does not match its bytes; we refuse the frame (no ACK, the device resends)";
const EDITED_CRC: KnownDeviation[] = [
  { test_method: 'testDecode', order: 35, reason: `${BAD_CRC}; the alarm byte was 0x13, changed to 0x19 (low battery)` },
  { test_method: 'testDecode', order: 36, reason: `${BAD_CRC}; alarm byte 0x19 (low battery), as in #35 and #37` },
  { test_method: 'testDecode', order: 37, reason: `${BAD_CRC}; alarm byte 0x19 (low battery), as in #35 and #36` },
  { test_method: 'testDecode', order: 52, reason: `${BAD_CRC}; the message type was 0x28, changed to 0x2E` },
  { test_method: 'testDecode', order: 115, reason: BAD_CRC },
  { test_method: 'testDecode', order: 145, reason: BAD_CRC },
  { test_method: 'testDecode', order: 155, reason: `${BAD_CRC}; placeholder IMEI 0123456789012345` },
  { test_method: 'testDecode', order: 165, reason: `${BAD_CRC}; the alarm code was 0x90, changed to 0x91 (hard braking)` },
  { test_method: 'testDecode', order: 166, reason: `${BAD_CRC}; 0x95 alarm code edited, as in #165` },
  { test_method: 'testDecode', order: 167, reason: `${BAD_CRC}; 0x95 alarm code edited, as in #165` },
  { test_method: 'testDecode', order: 168, reason: `${BAD_CRC}; 0x95 alarm code edited, as in #165` },
  { test_method: 'testDecode', order: 174, reason: `${BAD_CRC}; placeholder IMEI 999999999999999` },
];

/**
 * Samples we read differently from the reference decoder, each for a stated reason. Keep this
 * short: a sample leaves the list as soon as we can read it for a documented reason.
 */
const KNOWN: KnownDeviation[] = [
  ...EDITED_CRC,
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
