import { MalformedFrameError } from '../../malformed-frame-error.ts';
import type { DecodedFrame, DecoderSession } from '../../protocol.ts';

const latin1 = new TextDecoder('latin1');

/** `yyyyMMddHHmmss` in UTC. */
function stamp(now: Date): string {
  return now.toISOString().replace(/[-T:]/g, '').slice(0, 14);
}

/**
 * Parenthesised text of e-lock firmwares on the JT/T 808 connection. `(<id>,1,001,BASE,2,TIME)` asks
 * for the time: the same text goes back with TIME replaced by UTC `yyyyMMddHHmmss`. Anything else
 * (`(740190311185,1,001,ELOCK,3,529439)`) is the answer to a command, kept as its result, from the
 * device the connection already identified.
 */
export function decodeTextFrame(frame: Uint8Array, session: DecoderSession, now: Date): DecodedFrame {
  const sentence = latin1.decode(frame);
  if (!/^\([\x20-\x7e]*\)$/.test(sentence)) throw new MalformedFrameError('jt808: parenthesised text frame holds unprintable bytes');
  if (sentence.includes('BASE,2')) return { positions: [], reply: new TextEncoder().encode(sentence.replace('TIME', stamp(now))) };
  if (session.deviceId === undefined) return { positions: [] };
  return { positions: [], reports: [{ attributes: { result: sentence } }], answer: { text: sentence } };
}
