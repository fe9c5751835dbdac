/**
 * The device status fields about a tracker's radio, as the fleet tracking API shows them: the GSM
 * signal on the specification's 0–31 scale (a modem's CSQ, 3GPP TS 27.007) and the network
 * technology. Trackers report the signal on scales of their own (bars 0–4 or 0–5, CSQ); each
 * decoder converts with these functions and keeps the raw value in its attributes.
 */

/** The top of the specification's signal scale: CSQ 31, −51 dBm or better. */
export const SIGNAL_MAX = 31;

/** What the specification's `connectionType` says: the radio network the tracker is on. */
export type ConnectionType = '2G' | '3G' | '4G';

/**
 * Level `level` of a tracker's bars `0…top` (Teltonika 0–5, Concox 0–4) on the 0–31 scale, evenly
 * spread and rounded: 0 stays 0 (no signal) and `top` becomes 31. Undefined for a level off the
 * scale, which is a decoding of garbage rather than a signal.
 */
export function signalFromLevel(level: number, top: number): number | undefined {
  if (!Number.isInteger(level) || level < 0 || level > top || top <= 0) return undefined;
  return Math.round((level * SIGNAL_MAX) / top);
}

/** A modem's CSQ as is; 99 (the modem does not know) and anything off 0–31 are undefined. */
export function signalFromCsq(csq: number): number | undefined {
  return Number.isInteger(csq) && csq >= 0 && csq <= SIGNAL_MAX ? csq : undefined;
}
