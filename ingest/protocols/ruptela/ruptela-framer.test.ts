import { describe, expect, it } from 'vitest';
import { feedFramer } from '../../conformance/feed-framer.ts';
import { cutFrame } from '../../frame-cutter.ts';
import { ruptela } from './ruptela.ts';
import { nextRuptelaFrame } from './ruptela-framer.ts';

const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, 'hex'));

// Traccar's samples: an identification packet and an SMS-via-GPRS text answer (IO states).
const IDENT = '002e000315bc70d3e2ff0f4f42443130302e30312e30382e30300000c2b30ea77e430000601b000001f40000003c00144aa0';
const ANSWER = '0044000313612d76c5cb0744494e313d312c44494e323d302c44494e333d302c44494e343d302c444f5554313d312c444f5554323d312c41494e313d31372c41494e323d3236ac80';

describe('ruptela framer', () => {
  it('waits for the rest of a packet cut at any point, saying its size once the length is in', () => {
    for (const packet of [IDENT, ANSWER]) {
      const bytes = hex(packet);
      expect(nextRuptelaFrame(bytes.subarray(0, 1))).toEqual({ kind: 'incomplete' });
      for (let cut = 2; cut < bytes.length; cut++) expect(nextRuptelaFrame(bytes.subarray(0, cut))).toEqual({ kind: 'incomplete', frameBytes: bytes.length });
    }
  });

  it('cuts the same packets from a stream split at every point', () => {
    const stream = hex(IDENT + ANSWER);
    const whole = { frames: [IDENT, ANSWER], rest: 0 };
    expect(feedFramer(ruptela, [stream])).toEqual(whole);
    for (let cut = 1; cut < stream.length; cut++) expect(feedFramer(ruptela, [stream.subarray(0, cut), stream.subarray(cut)])).toEqual(whole);
  });

  it('refuses a length too short for an IMEI and command id (garbage)', () => {
    expect(nextRuptelaFrame(hex('0008ffffffff')).kind).toBe('invalid');
    expect(nextRuptelaFrame(hex('0000')).kind).toBe('invalid');
  });

  it('refuses a packet longer than the maximum frame before its body arrives', () => {
    expect(ruptela.maxFrameBytes).toBe(2048);
    expect(cutFrame(ruptela, hex('07fd0003')).kind).toBe('invalid'); // 2 + 2045 + 2 = 2049 > 2048
    expect(cutFrame(ruptela, hex('ffff0003')).kind).toBe('invalid');
    expect(cutFrame(ruptela, hex('07fc0003')).kind).toBe('incomplete'); // exactly 2048
  });
});
