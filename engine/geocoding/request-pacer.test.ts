import { describe, expect, it } from 'vitest';
import { RequestPacer } from './request-pacer.ts';

describe('RequestPacer', () => {
  it('lets the first request go at once and refuses one whose turn is further off than maxWaitMs', async () => {
    const pacer = new RequestPacer(1000, 500);
    const started = performance.now();
    expect(await pacer.turn()).toBe(true);
    expect(await pacer.turn()).toBe(false);
    expect(performance.now() - started).toBeLessThan(100);
  });

  it('queues requests whose turn is within maxWaitMs, one interval apart, in order', async () => {
    const pacer = new RequestPacer(100, 1000);
    const order: Array<[number, number]> = [];
    const t0 = performance.now();
    await Promise.all([0, 1, 2].map(async (i) => {
      expect(await pacer.turn()).toBe(true);
      order.push([i, performance.now() - t0]);
    }));
    expect(order.map(([i]) => i)).toEqual([0, 1, 2]);
    // Times are read when each caller resumes, a few ms after the pacer let it go (more on a loaded
    // machine), so two readings can be closer than the interval by that delay; unpaced they would be ~0.
    expect(order[1]![1] - order[0]![1]).toBeGreaterThanOrEqual(80);
    expect(order[2]![1] - order[1]![1]).toBeGreaterThanOrEqual(80);
    expect(order[2]![1] - order[0]![1]).toBeGreaterThanOrEqual(180);
  });

  it('holds every request back for a Retry-After', async () => {
    const pacer = new RequestPacer(10, 1000);
    pacer.holdFor(150);
    const started = performance.now();
    expect(await pacer.turn()).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(149);
    pacer.holdFor(5000);
    expect(await pacer.turn()).toBe(false);
  });

  it('lets a closed caller go without holding up the next', async () => {
    const pacer = new RequestPacer(200, 1000);
    await pacer.turn();
    const closing = new AbortController();
    const waiting = pacer.turn(closing.signal);
    closing.abort();
    await expect(waiting).rejects.toThrow();
    const started = performance.now();
    expect(await pacer.turn()).toBe(true);
    expect(performance.now() - started).toBeLessThan(250);
  });
});
