import { describe, expect, it } from 'vitest';
import type { AttributeValue, DecodedPosition } from '../../protocol.ts';
import { applyIo } from './teltonika-io.ts';
import { applyRadio } from './teltonika-radio.ts';

/** A record carrying these IO elements (id → one-byte value), with its radio applied. */
function record(io: Record<number, number>): DecodedPosition {
  const attributes: Record<string, AttributeValue> = {};
  for (const [id, value] of Object.entries(io)) applyIo(attributes, Number(id), value, 1);
  const p: DecodedPosition = { fixTime: new Date(0), valid: true, latitude: 0, longitude: 0, attributes };
  applyRadio(p);
  return p;
}

describe('Teltonika radio', () => {
  it.each([
    [0, 0],
    [1, 6],
    [3, 19],
    [5, 31],
    [7, undefined],
  ])('IO 21 GSM signal %s of 5 is %s of 31, the raw level kept as rssi', (level, signal) => {
    const p = record({ 21: level });
    expect(p.signalStrength).toBe(signal);
    expect(p.attributes.rssi).toBe(level);
  });

  it.each([
    [0, '3G'],
    [1, '2G'],
    [2, '4G'],
    [3, '4G'], // LTE Cat M1
    [4, '4G'], // LTE Cat NB1
    [99, undefined], // not known
  ])('IO 237 network type %s is %s, kept as networkType', (value, type) => {
    const p = record({ 237: value });
    expect(p.connectionType).toBe(type);
    expect(p.attributes.networkType).toBe(value);
  });

  it('leaves both unset when the record says nothing of the radio (IO 80 data mode is roaming, not the network)', () => {
    const p = record({ 80: 2, 239: 1 });
    expect(p.signalStrength).toBeUndefined();
    expect(p.connectionType).toBeUndefined();
  });
});
