import { describe, expect, it } from 'vitest';
import { FreshCache } from './fresh-cache.ts';

function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

function counter(start = 0) {
  let n = start;
  const reads: Array<() => void> = [];
  return {
    /** A read that answers the next number when released (or at once with `immediate`). */
    read: (immediate = true) => () =>
      immediate ? Promise.resolve(++n) : new Promise<number>((resolve) => reads.push(() => resolve(++n))),
    releaseAll: () => reads.splice(0).forEach((release) => release()),
    get count() {
      return n;
    },
  };
}

describe('FreshCache', () => {
  it('reads once for concurrent requests and reuses the value while it is young', async () => {
    const c = clock();
    const cache = new FreshCache<string, number>({ refreshMs: 500, maxAgeMs: 1000, maxEntries: 10 }, c.now);
    const reads = counter();
    const slow = reads.read(false);
    const both = Promise.all([cache.get('a', slow), cache.get('a', slow)]);
    reads.releaseAll();
    expect(await both).toEqual([1, 1]);
    c.advance(499);
    expect(await cache.get('a', reads.read())).toBe(1);
    expect(reads.count).toBe(1);
  });

  it('answers from the current value and refreshes in the background between refreshMs and maxAgeMs', async () => {
    const c = clock();
    const cache = new FreshCache<string, number>({ refreshMs: 500, maxAgeMs: 1000, maxEntries: 10 }, c.now);
    const reads = counter();
    await cache.get('a', reads.read());
    c.advance(600);
    const slow = reads.read(false);
    expect(await cache.get('a', slow)).toBe(1);
    // The refresh is running: a second request neither waits nor starts another.
    expect(await cache.get('a', slow)).toBe(1);
    reads.releaseAll();
    await new Promise((r) => setTimeout(r, 0));
    expect(await cache.get('a', reads.read())).toBe(2);
  });

  it('never answers from a read older than maxAgeMs: the request waits for a fresh one', async () => {
    const c = clock();
    const cache = new FreshCache<string, number>({ refreshMs: 500, maxAgeMs: 1000, maxEntries: 10 }, c.now);
    const reads = counter();
    await cache.get('a', reads.read());
    c.advance(1000);
    expect(await cache.get('a', reads.read())).toBe(2);
  });

  it('keeps nothing a read started before clear() found, and nothing `keep` refuses', async () => {
    const c = clock();
    const cache = new FreshCache<string, number | undefined>({ refreshMs: 500, maxAgeMs: 1000, maxEntries: 10, keep: (v) => v !== undefined }, c.now);
    const reads = counter();
    const before = cache.get('a', reads.read(false));
    cache.clear();
    reads.releaseAll();
    expect(await before).toBe(1);
    expect(await cache.get('a', reads.read())).toBe(2);
    let misses = 0;
    const miss = async () => (misses++, undefined);
    await cache.get('b', miss);
    await cache.get('b', miss);
    expect(misses).toBe(2);
  });

  it('does not keep a failed read, and holds at most maxEntries keys', async () => {
    const cache = new FreshCache<string, number>({ refreshMs: 500, maxAgeMs: 1000, maxEntries: 2 });
    await expect(cache.get('a', () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await cache.get('a', async () => 7)).toBe(7);
    await cache.get('b', async () => 8);
    await cache.get('c', async () => 9);
    expect(cache.size).toBe(2);
  });
});
