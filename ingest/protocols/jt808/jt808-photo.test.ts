import { describe, expect, it } from 'vitest';
import { mutate, seededRandom } from '../../conformance/frame-mutations.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { newSession, type DecoderSession } from '../../protocol.ts';
import { xorChecksum } from './jt808-escape.ts';
import { jt808 } from './jt808.ts';

const hexOf = (b: Uint8Array | undefined): string | undefined => (b ? Buffer.from(b).toString('hex') : undefined);

/** A 0x0801 (or other) message of terminal 013912345678, as subpackage `index` of `total` when given. */
function upload(serial: number, body: string, packet?: { total: number; index: number }, id = 0x0801): Uint8Array {
  const length = body.length / 2;
  const properties = length | (packet ? 0x2000 : 0);
  const parts = [Buffer.from([id >> 8, id & 0xff, properties >> 8, properties & 0xff]), Buffer.from('013912345678', 'hex'), Buffer.from([serial >> 8, serial & 0xff])];
  if (packet) parts.push(Buffer.from([packet.total >> 8, packet.total & 0xff, packet.index >> 8, packet.index & 0xff]));
  parts.push(Buffer.from(body, 'hex'));
  const message = Buffer.concat(parts);
  let x = 0;
  for (const b of message) x ^= b;
  return Uint8Array.from(Buffer.concat([Buffer.from([0x7e]), message, Buffer.from([x, 0x7e])]));
}

/** Multimedia header: id 42, `type` (0 picture), JPEG, event 0 (platform command), channel 1, a location at 2024-01-31 20:00:00 Beijing time. */
function mediaHeader(type = 0): string {
  const location = '00000000' + '00000003' + '0158cc00' + '06ca3a5c' + '0010' + '0000' + '0000' + '240131200000';
  return '0000002a' + type.toString(16).padStart(2, '0') + '00' + '00' + '01' + location;
}

const decode = (frame: Uint8Array, session: DecoderSession) => jt808.decode(frame, session);

describe('jt808 picture uploads', () => {
  it('assembles a picture from its subpackages, acknowledging each and answering 0x8800 when whole', () => {
    const session = newSession();
    const first = decode(upload(0x10, mediaHeader() + 'ffd8ff', { total: 3, index: 1 }), session);
    expect(first.media).toBeUndefined();
    expect(hexOf(first.reply)).toBe(hexOf(upload(0, '0010080100', undefined, 0x8001)));
    expect(decode(upload(0x11, 'e000', { total: 3, index: 2 }), session).media).toBeUndefined();
    const last = decode(upload(0x12, 'ffd9', { total: 3, index: 3 }), session);
    expect(last.media).toEqual({
      bytes: Uint8Array.from(Buffer.from('ffd8ffe000ffd9', 'hex')),
      contentType: 'image/jpeg',
      fileName: '42-ch1-ev0.jpg',
      time: new Date('2024-01-31T12:00:00Z'),
    });
    // The last packet's general response, then 0x8800: media id 42, nothing to send again.
    expect(hexOf(last.reply)).toBe('7e8001000501391234567800020012080100ad7e' + '7e8800000501391234567800030000002a00947e');
    expect(session.options.jt808Photo).toEqual({});
  });

  it('asks again for a packet that did not come, and completes once it has', () => {
    const session = newSession();
    decode(upload(1, mediaHeader() + 'ffd8ff', { total: 3, index: 1 }), session);
    const gap = decode(upload(3, 'ffd9', { total: 3, index: 3 }), session);
    expect(gap.media).toBeUndefined();
    expect(hexOf(gap.reply)?.endsWith('7e8800000701391234567800020000002a010002947e')).toBe(true);
    const resent = decode(upload(4, 'e000', { total: 3, index: 2 }), session);
    expect(hexOf(resent.media?.bytes)).toBe('ffd8ffe000ffd9');
  });

  it('gives up a picture larger than the session allows, and only acknowledges the rest of it', () => {
    const session: DecoderSession = { ...newSession(), mediaMaxBytes: 4 };
    expect(decode(upload(1, mediaHeader() + 'ffd8ff', { total: 3, index: 1 }), session).mediaDropped).toBeUndefined();
    const over = decode(upload(2, 'e000', { total: 3, index: 2 }), session);
    expect(over.mediaDropped).toBe('the picture 42 grew past 4 bytes at packet 2 of 3');
    expect(hexOf(over.reply)).toBe(hexOf(upload(1, '0002080100', undefined, 0x8001)));
    const rest = decode(upload(3, 'ffd9', { total: 3, index: 3 }), session);
    expect(rest.media).toBeUndefined();
    expect(rest.mediaDropped).toBeUndefined();
    // Answered as complete, so the terminal does not resend a picture we will not keep.
    expect(hexOf(rest.reply)).toMatch(/7e88000005013912345678[0-9a-f]{4}0000002a00[0-9a-f]{2}7e$/);
  });

  it('hands on a picture sent in one message, and acknowledges audio without keeping it', () => {
    const single = decode(upload(7, mediaHeader() + 'ffd8ffd9'), newSession());
    expect(hexOf(single.media?.bytes)).toBe('ffd8ffd9');
    const audio = decode(upload(8, mediaHeader(1) + '00112233'), newSession());
    expect(audio.media).toBeUndefined();
    expect(hexOf(audio.reply)).toContain('0008080100');
  });

  it('acknowledges the 0x0800 multimedia event announcing an upload', () => {
    const event = decode(upload(9, '0000002a' + '00' + '00' + '00' + '01', undefined, 0x0800), newSession());
    expect(event.positions).toEqual([]);
    expect(hexOf(event.reply)).toBe(hexOf(upload(0, '0009080000', undefined, 0x8001)));
  });
});

describe('jt808 picture uploads under mutated input', () => {
  it('survive 300 seeded mutations of each packet of an upload: MalformedFrameError or a reading, nothing else', () => {
    const random = seededRandom(0x6a7450);
    const packets = [upload(1, mediaHeader() + 'ffd8ff', { total: 3, index: 1 }), upload(2, 'e000', { total: 3, index: 2 }), upload(3, 'ffd9', { total: 3, index: 3 })];
    const escaped: string[] = [];
    for (let round = 0; round < 300; round++) {
      const session = newSession();
      for (const packet of packets) {
        // The checksum made to match, so the mutation reaches the upload's reading.
        const mutated = mutate(packet, random);
        if (mutated.length >= 3) mutated[mutated.length - 2] = xorChecksum(mutated, 1, mutated.length - 2);
        try {
          decode(mutated, session);
        } catch (error) {
          if (!(error instanceof MalformedFrameError)) escaped.push(`${Buffer.from(mutated).toString('hex')}: ${(error as Error).message}`);
        }
      }
    }
    expect(escaped).toEqual([]);
  });
});
