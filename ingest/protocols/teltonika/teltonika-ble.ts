import type { AttributeValue } from '../../protocol.ts';

/** Variable-length IO elements that carry a list of Bluetooth LE tags (advanced BLE / EYE sensors). */
export const BLE_TAG_LIST_IDS = new Set([548, 10828, 10829, 10830, 10831]);

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/**
 * A tag list: one header byte, then per tag a length byte and type-length-value items: 0x00 RSSI
 * (signed dBm), 0x01 tag id, 0x02 battery voltage as 2000 + 10 × low byte mV, 0x0E battery voltage in
 * mV; other items are kept as hex. Returns undefined when the lengths do not add up, so the caller
 * keeps the raw bytes instead of guessing.
 */
export function bleTagAttributes(value: Uint8Array): Record<string, AttributeValue> | undefined {
  const attributes: Record<string, AttributeValue> = {};
  let offset = 1;
  let tag = 0;
  while (offset < value.length) {
    const end = offset + 1 + value[offset]!;
    if (end > value.length) return undefined;
    tag++;
    let at = offset + 1;
    while (at < end) {
      if (at + 2 > end) return undefined;
      const type = value[at]!;
      const length = value[at + 1]!;
      const item = value.subarray(at + 2, at + 2 + length);
      if (at + 2 + length > end) return undefined;
      const prefix = `tag${tag}`;
      if (type === 0x00 && length === 1) attributes[`${prefix}Rssi`] = (item[0]! << 24) >> 24;
      else if (type === 0x01) attributes[`${prefix}Id`] = hex(item);
      else if (type === 0x02 && length === 2) attributes[`${prefix}Voltage`] = 2000 + 10 * item[1]!;
      else if (type === 0x0e && length === 2) attributes[`${prefix}Battery`] = (item[0]! << 8) | item[1]!;
      else attributes[`${prefix}Item${type}`] = hex(item);
      at += 2 + length;
    }
    offset = end;
  }
  return attributes;
}
