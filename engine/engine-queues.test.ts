import { afterEach, describe, expect, it } from 'vitest';
import { DeviceSignals } from './device-signals.ts';
import { ENGINE_QUEUE } from './engine-jobs.ts';
import { concurrencyShares, engineQueueName, EngineQueues, queueIndexOf, splitByQueue } from './engine-queues.ts';
import { inProcessQueues } from './queue/in-process-queue.ts';
import type { Job, QueueBackend } from './queue/job-queue.ts';

describe('engine queue names', () => {
  it('keeps the single queue\'s name for the first and numbers the others', () => {
    expect(engineQueueName(0)).toBe(ENGINE_QUEUE);
    expect(engineQueueName(0)).toBe('fleetcore-engine');
    expect([1, 2, 10].map(engineQueueName)).toEqual(['fleetcore-engine-1', 'fleetcore-engine-2', 'fleetcore-engine-10']);
  });
});

describe('a device\'s queue', () => {
  it.each([
    [1, 1, 0], [7, 1, 0],
    [0, 3, 0], [1, 3, 1], [2, 3, 2], [3, 3, 0], [1000, 3, 1],
    [-1, 3, 2], // never a negative index, whatever the id
  ])('device %i of %i queues goes to queue %i', (deviceId, count, index) => {
    expect(queueIndexOf(deviceId, count)).toBe(index);
  });

  it('is the same queue every time, and every queue gets devices', () => {
    const seen = new Set<number>();
    for (let id = 1; id <= 100; id++) {
      expect(queueIndexOf(id, 4)).toBe(queueIndexOf(id, 4));
      seen.add(queueIndexOf(id, 4));
    }
    expect([...seen].sort()).toEqual([0, 1, 2, 3]);
  });

  it('splits a signal by queue, each device once and in its order', () => {
    expect(splitByQueue([5, 1, 9, 3, 4, 6, 2], 3)).toEqual([[9, 3, 6], [1, 4], [5, 2]]);
    expect(splitByQueue([5, 1, 9], 1)).toEqual([[5, 1, 9]]);
    expect(splitByQueue([3, 6], 3)).toEqual([[3, 6], [], []]);
  });
});

describe('concurrency shared over the queues', () => {
  it.each([
    [2, 1, [2]],
    [2, 3, [1, 1, 1]], // at least one each: a queue without a worker is never worked
    [4, 3, [2, 1, 1]], // the remainder to the first, which also holds the schedules
    [8, 3, [3, 3, 2]],
    [6, 3, [2, 2, 2]],
  ])('%i jobs at once over %i queues: %j', (total, count, shares) => {
    expect(concurrencyShares(total, count)).toEqual(shares);
  });
});

/** The `devices` jobs each engine queue of `queues` runs, by queue name. */
function recordDevicesJobs(backend: QueueBackend, queues: EngineQueues): Map<string, number[][]> {
  const seen = new Map<string, number[][]>(queues.all.map((q) => [q.name, []]));
  for (const q of queues.all) {
    backend.worker(q.name, async (job: Job) => {
      if (job.name === 'devices') seen.get(q.name)!.push((job.data as { deviceIds: number[] }).deviceIds);
    });
  }
  return seen;
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('EngineQueues on the in-process backend', () => {
  let backend: QueueBackend;
  afterEach(() => backend?.close());

  it('sends each device\'s signal to its own queue, one job per queue that has devices', async () => {
    backend = inProcessQueues();
    const queues = new EngineQueues(backend, 3);
    expect(queues.all.map((q) => q.name)).toEqual(['fleetcore-engine', 'fleetcore-engine-1', 'fleetcore-engine-2']);
    expect(queues.first.name).toBe('fleetcore-engine');
    const seen = recordDevicesJobs(backend, queues);
    await queues.signal([4, 5, 7, 10]);
    await until(() => [...seen.values()].flat().length === 2);
    expect(Object.fromEntries(seen)).toEqual({ 'fleetcore-engine': [], 'fleetcore-engine-1': [[4, 7, 10]], 'fleetcore-engine-2': [[5]] });
  });

  it('with one queue, sends everything to the queue of old', async () => {
    backend = inProcessQueues();
    const queues = new EngineQueues(backend);
    const seen = recordDevicesJobs(backend, queues);
    await queues.signal([4, 5, 7]);
    await until(() => seen.get('fleetcore-engine')!.length === 1);
    expect(Object.fromEntries(seen)).toEqual({ 'fleetcore-engine': [[4, 5, 7]] });
  });

  it('ingest\'s gathered signal is split by queue too, each part with the commit time', async () => {
    backend = inProcessQueues();
    const queues = new EngineQueues(backend, 2);
    const data: Array<{ queue: string; data: unknown }> = [];
    for (const q of queues.all) backend.worker(q.name, async (job) => void data.push({ queue: q.name, data: job.data }));
    const signals = new DeviceSignals(queues, (error) => { throw error; }, 10_000);
    signals.add([1, 2, 3]);
    signals.add([2, 4]);
    await signals.close();
    await until(() => data.length === 2);
    const committedAt = (data[0]!.data as { committedAt: number }).committedAt;
    expect(committedAt).toBeGreaterThan(Date.now() - 5_000);
    expect(data.sort((a, b) => a.queue.localeCompare(b.queue))).toEqual([
      { queue: 'fleetcore-engine', data: { deviceIds: [2, 4], committedAt } },
      { queue: 'fleetcore-engine-1', data: { deviceIds: [1, 3], committedAt } },
    ]);
  });

  it('sends a queue whose devices reach the maximum at once and alone, so each queue\'s jobs stay full', async () => {
    backend = inProcessQueues();
    const queues = new EngineQueues(backend, 2);
    const seen = recordDevicesJobs(backend, queues);
    const signals = new DeviceSignals(queues, (error) => { throw error; }, 60_000, 3);
    signals.add([2, 1, 4]);
    signals.add([6, 3]);
    await until(() => seen.get('fleetcore-engine')!.length === 1);
    expect(Object.fromEntries(seen)).toEqual({ 'fleetcore-engine': [[2, 4, 6]], 'fleetcore-engine-1': [] });
    await signals.close();
    await until(() => seen.get('fleetcore-engine-1')!.length === 1);
    expect(Object.fromEntries(seen)).toEqual({ 'fleetcore-engine': [[2, 4, 6]], 'fleetcore-engine-1': [[1, 3]] });
  });

  it('refuses a count outside 1 to 64', () => {
    backend = inProcessQueues();
    expect(() => new EngineQueues(backend, 0)).toThrow(/from 1 to 64, got 0/);
    expect(() => new EngineQueues(backend, 65)).toThrow(/from 1 to 64, got 65/);
  });
});
