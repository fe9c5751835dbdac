import { describe, expect, it } from 'vitest';
import { joinBytes } from './join-bytes.ts';

describe('joinBytes', () => {
  it('puts the pieces one after another, empty ones included', () => {
    const pieces = [Uint8Array.of(1, 2), new Uint8Array(0), Uint8Array.of(3), Uint8Array.of(4, 5, 6)];
    expect([...joinBytes(pieces, 6)]).toEqual([1, 2, 3, 4, 5, 6]);
    expect(joinBytes([], 0).length).toBe(0);
  });
});
