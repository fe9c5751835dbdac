import { describe, expect, it } from 'vitest';
import { crc16Ibm } from '../../codec/crc16.ts';
import { corpusSamples, sampleBytes } from '../../conformance/corpus.ts';
import { newSession, type DecoderSession } from '../../protocol.ts';
import { cameraRequest } from './teltonika-camera.ts';
import { encodeCodec12 } from './teltonika-encoder.ts';
import { teltonika } from './teltonika.ts';

/** The corpus's `testDecodePhoto` captures, in order: the login, "no picture", an announcement, the first 2 KiB. */
const photoSamples = corpusSamples('teltonika')
  .filter((s) => s.test_method === 'testDecodePhoto')
  .sort((a, b) => a.order - b.order)
  .map(sampleBytes);

/** The capture with its CRC recomputed: two of them were edited by hand and carry a stale one, which we refuse. */
function withCrc(frame: Uint8Array): Uint8Array {
  const fixed = Uint8Array.from(frame);
  const end = fixed.length - 4;
  const crc = crc16Ibm(fixed, 8, end);
  fixed.set([0, 0, crc >> 8, crc & 0xff], end);
  return fixed;
}

/** A tracker's camera piece: `02 <id> <offset> <length> <bytes>`. */
function piece(id: number, offset: number, data: Uint8Array): Uint8Array {
  const payload = Buffer.alloc(11 + data.length);
  payload[0] = 0x02;
  payload.writeUInt32BE(id, 1);
  payload.writeUInt32BE(offset, 5);
  payload.writeUInt16BE(data.length, 9);
  payload.set(data, 11);
  return encodeCodec12(0x0d, payload);
}

function announce(id: number, size?: number): Uint8Array {
  const payload = Buffer.alloc(size === undefined ? 5 : 9);
  payload[0] = 0x01;
  payload.writeUInt32BE(id, 1);
  if (size !== undefined) payload.writeUInt32BE(size, 5);
  return encodeCodec12(0x0d, payload);
}

const PICTURE_ID = 0x598493ed;

function loggedIn(): DecoderSession {
  const session = newSession();
  teltonika.decode(photoSamples[0]!, session);
  return session;
}

describe('teltonika camera pictures', () => {
  it('reads the corpus captures: no picture, then an announcement answered with a request for its first 2 KiB', () => {
    expect(photoSamples).toHaveLength(4);
    const session = loggedIn();
    const none = teltonika.decode(photoSamples[1]!, session);
    expect(none).toMatchObject({ positions: [], reports: [], reply: undefined });
    expect(none.media).toBeUndefined();
    const announced = teltonika.decode(withCrc(photoSamples[2]!), session);
    expect(announced.positions).toEqual([]);
    expect(Buffer.from(announced.reply!)).toEqual(Buffer.from(cameraRequest(PICTURE_ID, 0, 2048)));
  });

  it('asks for the next piece after each full one, and hands over the picture when a shorter piece ends it', () => {
    const session = loggedIn();
    teltonika.decode(withCrc(photoSamples[2]!), session);
    const first = withCrc(photoSamples[3]!);
    const step = teltonika.decode(first, session);
    expect(step.media).toBeUndefined();
    expect(Buffer.from(step.reply!)).toEqual(Buffer.from(cameraRequest(PICTURE_ID, 2048, 2048)));
    // The capture's 2 KiB are the head of a JPEG: the data after `02 id offset length` in the message.
    const head = first.subarray(8 + 3 + 4 + 11, 8 + 3 + 4 + 11 + 2048);
    expect([...head.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    const tail = Uint8Array.of(0x01, 0x02, 0xff, 0xd9);
    const done = teltonika.decode(piece(PICTURE_ID, 2048, tail), session);
    expect(done.reply).toBeUndefined();
    expect(done.media).toMatchObject({ contentType: 'image/jpeg', fileName: 'picture_598493ed.jpg' });
    expect(Buffer.from(done.media!.bytes)).toEqual(Buffer.concat([head, tail]));
    expect(session.options.teltonikaPicture).toBeUndefined();
  });

  it('fetches an announced size exactly, asking for only what is left, and re-asks when a piece is out of step', () => {
    const session = loggedIn();
    const bytes = Buffer.alloc(3000, 7);
    expect(Buffer.from(teltonika.decode(announce(9, 3000), session).reply!)).toEqual(Buffer.from(cameraRequest(9, 0, 2048)));
    expect(Buffer.from(teltonika.decode(piece(9, 0, bytes.subarray(0, 2048)), session).reply!)).toEqual(Buffer.from(cameraRequest(9, 2048, 952)));
    // The first piece again: we hold 2048 bytes, so we ask for the rest again.
    expect(Buffer.from(teltonika.decode(piece(9, 0, bytes.subarray(0, 2048)), session).reply!)).toEqual(Buffer.from(cameraRequest(9, 2048, 952)));
    const done = teltonika.decode(piece(9, 2048, bytes.subarray(2048)), session);
    expect(Buffer.from(done.media!.bytes)).toEqual(bytes);
  });

  it('gives up a picture larger than the session allows, and ignores pieces of pictures it is not fetching', () => {
    const session = loggedIn();
    session.mediaMaxBytes = 1000;
    const refused = teltonika.decode(announce(5, 5000), session);
    expect(refused.reply).toBeUndefined();
    expect(refused.mediaDropped).toMatch(/announced as 5000 bytes, over 1000/);
    expect(teltonika.decode(piece(5, 0, Buffer.alloc(100)), session)).toMatchObject({ reply: undefined });
    teltonika.decode(announce(6), session);
    expect(teltonika.decode(piece(6, 0, Buffer.alloc(2048)), session).mediaDropped).toMatch(/grew past 1000 bytes/);
  });
});
