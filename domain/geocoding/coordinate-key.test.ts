import { describe, expect, it } from 'vitest';
import { coordinateKey } from './coordinate-key.ts';

describe('coordinateKey', () => {
  it('rounds to 4 decimals, so points metres apart share a key', () => {
    expect(coordinateKey(19.43261, -99.13318)).toBe('19.4326,-99.1332');
    expect(coordinateKey(19.43259, -99.13321)).toBe('19.4326,-99.1332');
  });

  it('keeps points 11 m apart in two keys', () => {
    expect(coordinateKey(19.4326, -99.1332)).not.toBe(coordinateKey(19.4327, -99.1332));
  });

  it('writes both sides of zero as one key', () => {
    expect(coordinateKey(-0.00001, -0.00002)).toBe('0.0000,0.0000');
    expect(coordinateKey(0.00001, 0.00002)).toBe('0.0000,0.0000');
  });
});
