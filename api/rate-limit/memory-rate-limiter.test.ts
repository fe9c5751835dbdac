import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from './memory-rate-limiter.ts';
import type { RateLimiter } from './rate-limiter.ts';

const WINDOW = 10_000;

let clock = 0;
const now = () => clock;
const limiters: RateLimiter[] = [];
function limiter(max: number, windowMs = WINDOW) {
  const l = createMemoryRateLimiter(max, windowMs, now);
  limiters.push(l);
  return l;
}
afterEach(async () => {
  for (const l of limiters.splice(0)) await l.close();
  clock = 0;
});

describe('createMemoryRateLimiter (sliding window, injected clock)', () => {
  it('allows max hits in a window, then refuses', async () => {
    clock = 1_000_000;
    const l = limiter(3);
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await l.hit('k'));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    expect(decisions.every((d) => d.limit === 3)).toBe(true);
  });

  it('reports seconds until the oldest counted hit leaves the window', async () => {
    clock = 0;
    const l = limiter(3);
    expect(await l.hit('k')).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 10 });
    clock = 1_500;
    expect(await l.hit('k')).toEqual({ allowed: true, limit: 3, remaining: 1, resetSeconds: 9 }); // 8.5 s rounds up
    clock = 2_000;
    expect(await l.hit('k')).toEqual({ allowed: true, limit: 3, remaining: 0, resetSeconds: 8 });
    clock = 5_000;
    expect(await l.hit('k')).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 5 });
    clock = 9_999;
    expect(await l.hit('k')).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 1 }); // never below 1
  });

  it('frees a slot exactly when the oldest hit leaves the window', async () => {
    clock = 0;
    const l = limiter(2);
    await l.hit('k'); // t=0
    clock = 4_000;
    await l.hit('k'); // t=4000
    clock = 9_999;
    expect((await l.hit('k')).allowed).toBe(false);
    clock = 10_000; // the hit at 0 is now a full window old
    const freed = await l.hit('k');
    expect(freed).toMatchObject({ allowed: true, remaining: 0 });
    // Oldest counted is now 4000: 4 s left.
    expect(freed.resetSeconds).toBe(4);
    expect((await l.hit('k')).allowed).toBe(false);
    clock = 14_000;
    expect((await l.hit('k')).allowed).toBe(true);
  });

  it('does not count refused hits', async () => {
    clock = 0;
    const l = limiter(2);
    await l.hit('k');
    await l.hit('k');
    clock = 5_000;
    for (let i = 0; i < 20; i++) expect((await l.hit('k')).allowed).toBe(false);
    clock = 10_000; // both counted hits expire; the 20 refusals at 5000 must not hold the window
    expect(await l.hit('k')).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 10 });
    expect(await l.hit('k')).toMatchObject({ allowed: true, remaining: 0 });
    expect((await l.hit('k')).allowed).toBe(false);
  });

  it('keeps each key separate', async () => {
    clock = 0;
    const l = limiter(1);
    expect((await l.hit('a')).allowed).toBe(true);
    expect((await l.hit('a')).allowed).toBe(false);
    expect(await l.hit('b')).toMatchObject({ allowed: true, remaining: 0 });
    expect((await l.hit('b')).allowed).toBe(false);
  });

  it('is a sliding window, not a fixed one: a burst at the end of one window still blocks the start of the next', async () => {
    clock = 0;
    const l = limiter(3);
    clock = 9_000;
    for (let i = 0; i < 3; i++) expect((await l.hit('k')).allowed).toBe(true);
    clock = 11_000; // a fixed 10 s window would have reset at 10_000
    expect(await l.hit('k')).toMatchObject({ allowed: false, resetSeconds: 8 });
    clock = 19_000;
    expect((await l.hit('k')).allowed).toBe(true);
  });

  it('honours other window lengths', async () => {
    clock = 0;
    const l = limiter(1, 60_000);
    await l.hit('k');
    clock = 30_000;
    expect(await l.hit('k')).toMatchObject({ allowed: false, resetSeconds: 30 });
    clock = 60_000;
    expect((await l.hit('k')).allowed).toBe(true);
  });
});
