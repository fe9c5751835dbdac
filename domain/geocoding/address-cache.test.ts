import { describe, expect, it } from 'vitest';
import { AddressCache } from './address-cache.ts';

describe('AddressCache', () => {
  it('keeps null as an answer, apart from not cached', () => {
    const cache = new AddressCache(2);
    cache.set('0,0', null);
    expect(cache.get('0,0')).toBeNull();
    expect(cache.get('1,1')).toBeUndefined();
  });

  it('drops the least recently used entry past its capacity', () => {
    const cache = new AddressCache(2);
    cache.set('a', 'A');
    cache.set('b', 'B');
    expect(cache.get('a')).toBe('A'); // a is now more recent than b
    cache.set('c', 'C');
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe('A');
    expect(cache.get('c')).toBe('C');
    expect(cache.size).toBe(2);
  });

  it('holds nothing with capacity 0', () => {
    const cache = new AddressCache(0);
    cache.set('a', 'A');
    expect(cache.get('a')).toBeUndefined();
  });
});
