import { describe, expect, it } from 'vitest';
import { cutFrame } from '../../frame-cutter.ts';
import { gl200FrameForm } from './gl200-binary-framer.ts';
import { nextGl200Frame } from './gl200-framer.ts';
import { gl200 } from './gl200.ts';

// Captures from Queclink GV/GB devices (Traccar's binary decoder test).
const evt = Buffer.from('2b4556542d00fc1fbf0063450102020956325403000343056437f8220700000200000000010000160100f2007eff75a1f0025c6b1a07e1080108241a02680003189c1ac500000000000002100800000000000000000007e1080108241a19e24e4e0d0a', 'hex');
const inf = Buffer.from('2b494e4601fd7f0076676231303000000045010202090104020500004100054007e107150b061d0000003f010e02580000000000d0312a1013648935103226313921591f1200000000000302680003189c1ac3001b02680003189c1ac4000d02680003189c1ac5001207e107150b0d3704f658060d0a', 'hex');
const ack = Buffer.from('2b41434b017f244501010108676231303000000000ffff07e1070b03112d054dfe030d0a', 'hex');
const record = Buffer.from('2b000038000865134050947226820300030000216a3ed6f101895000521629fa8b28f402ac1a8e6a3ed6f100001600000010f505010ff824', 'hex');
const textAck = Buffer.from('+ACK:GTHBD,1A0401,135790246811220,,20100214093254,11F0$', 'latin1');
const textFri = Buffer.from('+RESP:GTFRI,060228,862894020180553,,,10,1,1,20.0,147,329.7,-62.899703,-17.720434,20160309113548,0736,0003,6AAE,3381,00,913.3,,,,0,220101,,,,20160309073554,132B$', 'latin1');

function cutAll(input: Uint8Array): Buffer[] {
  const frames: Buffer[] = [];
  let rest = input;
  for (let guard = 0; rest.length > 0 && guard < 20; guard++) {
    const r = nextGl200Frame(rest);
    if (r.kind === 'incomplete') break;
    if (r.kind === 'invalid') throw new Error(r.reason);
    if (r.kind === 'frame') frames.push(Buffer.from(r.frame));
    rest = rest.subarray(r.consumed);
  }
  return frames;
}

describe('gl200 binary framer', () => {
  it.each([
    ['+EVT (two-byte length at 9)', evt],
    ['+INF (two-byte length at 7)', inf],
    ['binary +ACK (one-byte length at 6)', ack],
    ['record format (+\\0, length at 2)', record],
  ])('cuts a whole %s by its length and asks for more at every split point', (_name, frame) => {
    expect(nextGl200Frame(frame)).toEqual({ kind: 'frame', frame, consumed: frame.length });
    for (let cut = 0; cut < frame.length; cut++) {
      const r = nextGl200Frame(frame.subarray(0, cut));
      expect(r.kind).toBe('incomplete');
    }
    // Once the length field has come, the framer says how long the frame will be.
    expect(nextGl200Frame(frame.subarray(0, frame.length - 1))).toEqual({ kind: 'incomplete', frameBytes: frame.length });
  });

  it('does not end a binary frame at the $, NUL or line break bytes inside it', () => {
    // The EVT capture holds '$' and NUL well before its end.
    for (const delimiter of [0x24, 0x00]) {
      expect(evt.indexOf(delimiter)).toBeGreaterThan(0);
      expect(evt.indexOf(delimiter)).toBeLessThan(evt.length - 2);
    }
    expect(cutAll(evt)).toEqual([evt]);
  });

  it('cuts binary and text frames concatenated on one connection, in order', () => {
    const stream = Buffer.concat([evt, textFri, Buffer.from('\r\n'), ack, evt, textAck, record]);
    expect(cutAll(stream).map((f) => f.length)).toEqual([evt.length, textFri.length, ack.length, evt.length, textAck.length, record.length]);
  });

  it('tells +ACK: text from a binary +ACK by its fifth byte', () => {
    expect(gl200FrameForm(textAck)).toBe('text');
    expect(gl200FrameForm(ack)).toBe('binary');
    expect(gl200FrameForm(Buffer.from('+ACK'))).toBe('undecided');
    expect(gl200FrameForm(Buffer.from('+RS'))).toBe('undecided');
    expect(gl200FrameForm(Buffer.from('+RESP'))).toBe('text');
    expect(gl200FrameForm(Buffer.from('+BUFF:GTFRI'))).toBe('text');
    expect(gl200FrameForm(Buffer.from([0x2b, 0x00]))).toBe('binary');
  });

  it('still cuts a text frame that ends within the first bytes', () => {
    expect(nextGl200Frame(Buffer.from('+A$', 'latin1'))).toEqual({ kind: 'frame', frame: Buffer.from('+A$'), consumed: 3 });
  });

  it('refuses a declared length over the maximum before the body arrives', () => {
    const header = Buffer.from(evt.subarray(0, 11));
    header.writeUInt16BE(60000, 9);
    expect(nextGl200Frame(header)).toEqual({ kind: 'incomplete', frameBytes: 60000 });
    expect(cutFrame(gl200, header).kind).toBe('invalid');
    expect(cutFrame(gl200, Buffer.from([0x2b, 0x00, 0xff, 0xff])).kind).toBe('invalid');
  });

  it('refuses a length shorter than the header that holds it', () => {
    const lying = Buffer.from(evt);
    lying.writeUInt16BE(5, 9);
    expect(nextGl200Frame(lying).kind).toBe('invalid');
    expect(nextGl200Frame(Buffer.from([0x2b, 0x00, 0x00, 0x03])).kind).toBe('invalid');
  });
});
