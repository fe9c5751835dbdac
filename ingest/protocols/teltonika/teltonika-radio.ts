import { signalFromLevel, type ConnectionType } from '../../../domain/device-signal.ts';
import type { DecodedPosition } from '../../protocol.ts';

/**
 * IO 237 "Network Type" by value: 0 3G, 1 2G (GSM), 2 4G, 3 LTE Cat M1, 4 LTE Cat NB1 (both LTE, so
 * 4G); 99 means the device does not know. IO 80 (data mode) says home or roaming, not the radio.
 */
const NETWORK_TYPES: ReadonlyArray<ConnectionType | undefined> = ['3G', '2G', '4G', '4G', '4G'];

/**
 * An AVL record's radio in the specification's terms: IO 21, the GSM signal in bars 0–5 (kept as
 * `rssi`), on the 0–31 scale, and IO 237 (kept as `networkType`) as the connection type.
 */
export function applyRadio(p: DecodedPosition): void {
  const a = p.attributes;
  if (typeof a.rssi === 'number') {
    const signal = signalFromLevel(a.rssi, 5);
    if (signal !== undefined) p.signalStrength = signal;
  }
  if (typeof a.networkType === 'number') {
    const type = NETWORK_TYPES[a.networkType];
    if (type !== undefined) p.connectionType = type;
  }
}
