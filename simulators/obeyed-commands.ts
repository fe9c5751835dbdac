/** The digital outputs of a simulated tracker: out1 drives the engine cut relay, out2 a siren. */
export interface Outputs {
  out1: boolean;
  out2: boolean;
}

/** What a simulated device does with a command's text: its outputs afterwards and the text it answers. */
export interface Obeyed {
  outputs: Outputs;
  answer: string;
}

const SETDIGOUT = /^setdigout ([01?]{1,4})(?: .*)?$/;

/**
 * As an FMB device obeys `setdigout`: one character per output, `1` on, `0` off, `?` left as it is;
 * it answers with each output's state. `getver` answers its firmware line; anything else is unknown.
 */
export function obeyTeltonika(text: string, outputs: Outputs): Obeyed {
  const m = SETDIGOUT.exec(text.trim());
  if (m) {
    const next = { ...outputs };
    const states = [...m[1]!];
    if (states[0] === '1' || states[0] === '0') next.out1 = states[0] === '1';
    if (states[1] === '1' || states[1] === '0') next.out2 = states[1] === '1';
    const shown = (state: string | undefined, value: boolean) => (state === undefined || state === '?' ? 'IGNORED' : `${value ? 1 : 0} Timeout:INFINITY`);
    return { outputs: next, answer: `DOUT1:${shown(states[0], next.out1)} DOUT2:${shown(states[1], next.out2)}` };
  }
  if (text.trim() === 'getver') return { outputs, answer: 'Ver:03.28.07_00 GPS:AXN_5.10_3333 Hw:FMB920 Mod:15 IMEI:simulated' };
  return { outputs, answer: 'Unknown command' };
}

/**
 * As a Concox device obeys its relay commands (`Relay,1#` / `Relay,0#`, and the older `DYD,<password>#`
 * / `HFYD,<password>#`), answering in the words their firmware uses.
 */
export function obeyGt06(text: string, outputs: Outputs): Obeyed {
  const command = text.trim().toUpperCase();
  if (command === 'RELAY,1#' || /^DYD,\d{6}#$/.test(command)) return { outputs: { ...outputs, out1: true }, answer: 'Cut off the fuel supply: Success!' };
  if (command === 'RELAY,0#' || /^HFYD,\d{6}#$/.test(command)) return { outputs: { ...outputs, out1: false }, answer: 'Restore fuel supply: Success!' };
  return { outputs, answer: 'Unknown command' };
}

/**
 * As a Coban TK103A/B obeys the server's codes: J cuts the fuel/power line (out1) and K restores it,
 * each confirmed by the letter and `t` (`jt`, `kt`) as a report's type. Other codes get no answer here
 * (an empty text): the device acts on them (B: a position now) or ignores them without a word.
 */
export function obeyGps103(code: string, outputs: Outputs): Obeyed {
  const command = code.trim().toUpperCase();
  if (command === 'J') return { outputs: { ...outputs, out1: true }, answer: 'jt' };
  if (command === 'K') return { outputs: { ...outputs, out1: false }, answer: 'kt' };
  return { outputs, answer: '' };
}

/** A text that asks a relay to cut (`Relay,1#`, `DYD,<password>#`) or restore (`Relay,0#`, `HFYD,<password>#`) the fuel line. */
function relayText(text: string): boolean | undefined {
  const command = text.trim().toUpperCase();
  if (command === 'RELAY,1#' || /^DYD,\d{6}#$/.test(command)) return true;
  if (command === 'RELAY,0#' || /^HFYD,\d{6}#$/.test(command)) return false;
  return undefined;
}

/**
 * As a JT/T 808 terminal obeys the platform, answering with the general response's result word:
 * terminal control (0x8105) command word 0xF0 cuts the fuel line (out1), 0xF1 restores it; a text
 * message (0x8300) is taken (`success`), and run when it is a relay command; anything else is `not supported`.
 * `text` is the command as jt808-packets.ts reads it: `terminal control 0xf0`, `text <message>`, …
 */
export function obeyJt808(text: string, outputs: Outputs): Obeyed {
  if (text === 'terminal control 0xf0') return { outputs: { ...outputs, out1: true }, answer: 'success' };
  if (text === 'terminal control 0xf1') return { outputs: { ...outputs, out1: false }, answer: 'success' };
  if (text.startsWith('text ')) {
    const relay = relayText(text.slice(5));
    return { outputs: relay === undefined ? outputs : { ...outputs, out1: relay }, answer: 'success' };
  }
  return { outputs, answer: 'not supported' };
}
