import { describe, expect, it } from 'vitest';
import { newSession, type DecodedMedia } from '../../protocol.ts';
import { MalformedFrameError } from '../../malformed-frame-error.ts';
import { meitrack } from './meitrack.ts';
import { meitrackCommand } from './meitrack-decoder.ts';
import { photoNameTime } from './meitrack-photo.ts';

const text = (s: string) => Buffer.from(s, 'latin1');

/** A D00 chunk with a correct length and checksum around `data`. */
function chunk(file: string, total: number, index: number, data: string): Uint8Array {
  const body = `,864507031219974,D00,${file},${total},${index},${data}*`;
  const head = `$$A${body.length + 4}`;
  let sum = 0;
  for (const ch of head + body) sum += ch.charCodeAt(0);
  return text(`${head}${body}${(sum & 0xff).toString(16).toUpperCase().padStart(2, '0')}\r\n`);
}

describe('meitrack decoder', () => {
  it('builds commands with the length counted from the comma and the checksum through *', () => {
    // The device's own `$$z27,861451040910625,AAC,1*D3` (corpus); `@@` adds 2 × 0x1C to the sum.
    expect(Buffer.from(meitrackCommand('z', '861451040910625', 'AAC,1')).toString('latin1')).toBe('@@z27,861451040910625,AAC,1*0B\r\n');
  });

  it('answers a CCC upload with the number of records it read', () => {
    const frame = Buffer.from('24245838362c3336393830303031343039303032312c4343432c020134000100000023381f91ffe354b806c5e3121b0009130000000000000000d33801007cbf0200fe0101000435feeb02000500a3010000000000002a62650d0a', 'hex');
    const result = meitrack.decode(frame, newSession());
    expect(result.positions).toHaveLength(1);
    expect(Buffer.from(result.reply!).toString('latin1')).toMatch(/^@@X\d+,369800014090021,CCC,1\*[0-9A-F]{2}\r\n$/);
  });

  it('asks for the first photo chunk after D03, an answer that says the picture is under way', () => {
    const result = meitrack.decode(text('$$D28,353358017784062,D03,OK*F3'), newSession());
    expect(result.positions).toEqual([]);
    expect(result.answer).toEqual({ text: 'D03,OK', progress: true });
    expect(Buffer.from(result.reply!).toString('latin1')).toMatch(/^@@O\d+,353358017784062,D00,camera_picture\.jpg,0\*[0-9A-F]{2}\r\n$/);
  });

  it('assembles photo chunks, asking for more every eight, and hands over the whole picture at the end', () => {
    const session = newSession();
    const replies: string[] = [];
    let media: DecodedMedia | undefined;
    for (let i = 0; i < 10; i++) {
      const result = meitrack.decode(chunk('p.jpg', 10, i, `data${i}`), session);
      if (result.reply) replies.push(Buffer.from(result.reply).toString('latin1'));
      if (result.media) media = result.media;
    }
    expect(replies).toHaveLength(1);
    expect(replies[0]).toContain('D00,p.jpg,8*');
    expect(Buffer.from(media!.bytes).toString('latin1')).toBe(Array.from({ length: 10 }, (_, i) => `data${i}`).join(''));
    expect(media).toMatchObject({ contentType: 'image/jpeg', fileName: 'p.jpg' });
    expect(media!.time).toBeUndefined();
    expect(session.options.meitrackPhoto).toBeUndefined();
  });

  it('reads the time at the head of an event picture\'s name', () => {
    expect(photoNameTime('180224072614_C1E109_N1U1D1.jpg')).toEqual(new Date('2018-02-24T07:26:14Z'));
    expect(photoNameTime('180231072614_x.jpg')).toBeUndefined();
    expect(photoNameTime('camera_picture.jpg')).toBeUndefined();
  });

  it('gives up a picture that grows past the session\'s bound, and ignores the rest of it', () => {
    const session = newSession();
    session.mediaMaxBytes = 12;
    expect(meitrack.decode(chunk('big.jpg', 4, 0, 'abcdefgh'), session).mediaDropped).toBeUndefined();
    const dropped = meitrack.decode(chunk('big.jpg', 4, 1, 'ijklmnop'), session);
    expect(dropped.mediaDropped).toMatch(/big\.jpg grew past 12 bytes at chunk 2 of 4/);
    const rest = meitrack.decode(chunk('big.jpg', 4, 2, 'qrstuvwx'), session);
    expect(rest).toEqual({ deviceId: '864507031219974', positions: [] });
    // A new picture starts afresh.
    expect(meitrack.decode(chunk('next.jpg', 1, 0, 'tiny'), session).media?.fileName).toBe('next.jpg');
  });

  it('reports command answers without inventing a position', () => {
    const result = meitrack.decode(text('$$u28,864606044993987,D82,0*D6'), newSession());
    expect(result.positions).toEqual([]);
    expect(result.reports).toEqual([{ attributes: { result: 'D82,0' } }]);
  });

  it('reads a frame whose checksum does not match (hand-edited captures and firmwares send such)', () => {
    const good = '$$u28,864606044993987,D82,0*D6\r\n';
    expect(meitrack.decode(text(good.replace('*D6', '*D7')), newSession()).reports).toHaveLength(1);
  });

  it('gives the GSM signal (the modem\'s CSQ, kept as rssi) as signal strength, and the battery and supply volts', () => {
    const aaa = (gsm: string) =>
      `$$D149,867047043162018,AAA,35,-1.264865,36.800705,211001105240,A,9,${gsm},41.0,323,1,1697,1,0,000|00||,0000,4.33|12.96|1.92|2.72|2.69,0.000000|0|0.000000,*00\r\n`;
    const p = meitrack.decode(text(aaa('20')), newSession()).positions[0]!;
    expect(p.signalStrength).toBe(20);
    expect(p.attributes).toMatchObject({ rssi: 20, battery: 4.33, power: 12.96 });
    // 99 is the modem saying it does not know.
    expect(meitrack.decode(text(aaa('99')), newSession()).positions[0]!.signalStrength).toBeUndefined();
  });

  it('rejects frames that are not Meitrack', () => {
    expect(() => meitrack.decode(text('$$A10,abc,AAA*00'), newSession())).toThrow(MalformedFrameError);
    expect(() => meitrack.decode(text('hello'), newSession())).toThrow(MalformedFrameError);
  });
});
