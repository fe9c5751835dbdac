import { text, trimmed } from './jt808-fields.ts';
import { readLocation } from './jt808-location.ts';
import { generalResponse, newReport, placeRecord, type Jt808Message, type Jt808Result } from './jt808-message.ts';

/** 0x0001 results (JT/T 808 8.1): worded so that a refusal reads as one (domain/commands/answer-outcome.ts). */
const GENERAL_RESULTS = ['success', 'failure', 'message error', 'not supported', 'alarm confirmed'];

/** 0x8801 take picture: its first answer says the camera is at work; the picture completes it. */
const TAKE_PICTURE = 0x8801;

function resultText(code: number, words: readonly string[]): string {
  return words[code] ?? `result ${code}`;
}

/**
 * 0x0001 terminal general response: the serial and id of our message and a result. It is the answer to
 * terminal control (engine stop and resume) and text (custom commands); to a take-picture command it
 * only says the camera started, so the command waits on for its picture.
 */
export function decodeTerminalResponse(msg: Jt808Message): Jt808Result {
  const r = msg.body;
  const serial = r.u16();
  const answered = r.u16();
  const code = r.u8();
  const result = resultText(code, GENERAL_RESULTS);
  return {
    positions: [],
    reports: [newReport({ result, answeredMessage: answered })],
    answer: { text: result, serial, ...(answered === TAKE_PICTURE && code === 0 ? { progress: true } : {}) },
  };
}

/**
 * 0x0500 vehicle control answer and 0x0201 location query answer: the serial of our message, then a
 * location report. The position is the answer, its state showing what the control did.
 */
export function decodeLocationAnswer(msg: Jt808Message): Jt808Result {
  const serial = msg.body.u16();
  const p = readLocation(msg.body);
  const textOf = msg.id === 0x0500 ? 'vehicle control done' : 'location';
  p.attributes.result = textOf;
  const result: Jt808Result = { positions: [], answer: { text: textOf, serial } };
  placeRecord(p, result);
  return result;
}

const CAMERA_RESULTS = ['success', 'failure', 'channel not supported'];

/**
 * 0x0805 camera command answer (2013): serial of our 0x8801, a result, and on success the ids of the
 * pictures it took, which follow as 0x0801 uploads: the command waits on for them.
 */
export function decodeCameraAnswer(msg: Jt808Message): Jt808Result {
  const r = msg.body;
  const serial = r.u16();
  const code = r.u8();
  const result = resultText(code, CAMERA_RESULTS);
  const attributes: Record<string, string | number> = { result };
  if (code === 0 && r.remaining >= 2) {
    const count = r.u16();
    const ids: number[] = [];
    for (let i = 0; i < count && r.remaining >= 4; i++) ids.push(r.u32());
    attributes.mediaIds = ids.join(' ');
  }
  return {
    positions: [],
    reports: [newReport(attributes)],
    reply: generalResponse(msg),
    answer: { text: result, serial, ...(code === 0 ? { progress: true } : {}) },
  };
}

/** 0x1300 text answer of some firmwares: the serial of our text, then UTF-16BE text. */
export function decodeTextAnswer(msg: Jt808Message): Jt808Result {
  const r = msg.body;
  const serial = r.u16();
  const bytes = r.slice(r.remaining & ~1);
  const swapped = Buffer.from(bytes).swap16();
  const result = trimmed(swapped.toString('utf16le'));
  return { positions: [], reports: [newReport({ result })], answer: { text: result, serial } };
}

/** 0x0701 (some firmwares' command answer): a 4-byte length and ASCII text. */
export function decodeCommandText(msg: Jt808Message): Jt808Result {
  const r = msg.body;
  const length = r.u32();
  const result = text(r, Math.min(length, r.remaining));
  return { positions: [], reports: [newReport({ result })], answer: { text: result } };
}

let gbk: InstanceType<typeof TextDecoder> | undefined;
function gbkText(bytes: Uint8Array): string {
  try {
    gbk ??= new TextDecoder('gbk');
    return gbk.decode(bytes);
  } catch {
    return new TextDecoder('latin1').decode(bytes);
  }
}

/** 0x6006 text report (answers to SMS-style commands): an encoding byte and GBK text. */
export function decodeTextReport(msg: Jt808Message): Jt808Result {
  const r = msg.body;
  r.u8(); // encoding
  const result = gbkText(r.slice(r.remaining));
  return { positions: [], reports: [newReport({ result })], reply: generalResponse(msg), answer: { text: result } };
}
