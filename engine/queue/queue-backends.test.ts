import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { spawnSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deleteRedisPrefix } from '../../runtime/delete-redis-prefix.ts';
import type { RedisTarget } from '../../runtime/redis-client.ts';
import { RedisClusterProcess } from '../../test/faults/redis-cluster-process.ts';
import { fromBullmqId, toBullmqId } from './bullmq-job-id.ts';
import { bullmqQueues } from './bullmq-queues.ts';
import { inProcessQueues } from './in-process-queue.ts';
import type { Job, QueueBackend } from './job-queue.ts';

/** What one behaviour gets: a fresh backend, a queue name of its own, and a second process's view. */
interface Context {
  backend: QueueBackend;
  queue: string;
  /** Another engine process on the same store (BullMQ: a second backend on the same Redis prefix; in-process: the same backend). */
  sibling(): QueueBackend;
}

interface Harness {
  open(): Context;
  cleanup(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls rather than sleeping a fixed time: fast when the machine is idle, patient when it is loaded. */
async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
}

function uniqueName(): string {
  return `fc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/** Records the jobs a processor saw, with the time each started. */
function recorder() {
  const seen: { job: Job; at: number }[] = [];
  return { seen, record: (job: Job) => seen.push({ job, at: Date.now() }) };
}

const behaviours: { name: string; run(ctx: Context): Promise<void> }[] = [
  {
    name: 'processes a job with its data, which the caller can no longer change',
    async run({ backend, queue }) {
      const { seen, record } = recorder();
      backend.worker(queue, async (job) => void record(job));
      const data = { deviceId: 7, tags: ['a'] };
      await backend.queue(queue).add('ping', data);
      data.tags.push('mutated');
      await waitFor(() => seen.length === 1, 'the job');
      expect(seen[0]!.job).toMatchObject({ name: 'ping', data: { deviceId: 7, tags: ['a'] }, attempt: 1 });
      expect(typeof seen[0]!.job.id).toBe('string');
    },
  },
  {
    name: 'runs ready jobs in the order they were added',
    async run({ backend, queue }) {
      const q = backend.queue(queue);
      for (let i = 0; i < 5; i++) await q.add('n', { i });
      const order: number[] = [];
      backend.worker(queue, async (job) => void order.push((job.data as { i: number }).i));
      await waitFor(() => order.length === 5, 'five jobs');
      expect(order).toEqual([0, 1, 2, 3, 4]);
    },
  },
  {
    name: 'runs a delayed job no earlier than its delay',
    async run({ backend, queue }) {
      const { seen, record } = recorder();
      backend.worker(queue, async (job) => void record(job));
      const addedAt = Date.now();
      await backend.queue(queue).add('later', {}, { delay: 150 });
      await waitFor(() => seen.length === 1, 'the delayed job');
      // A few ms of slack: Redis and Node timers round to the millisecond.
      expect(seen[0]!.at - addedAt).toBeGreaterThanOrEqual(140);
    },
  },
  {
    name: 'ignores a job whose id is already waiting or running, and accepts it again once done',
    async run({ backend, queue }) {
      const q = backend.queue(queue);
      const { seen, record } = recorder();
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      backend.worker(queue, async (job) => {
        record(job);
        if ((job.data as { hold?: boolean }).hold) await released;
      });
      // While waiting (delayed so that none runs before the duplicates arrive).
      await q.add('dup', { n: 1 }, { jobId: 'travel:42', delay: 50 });
      await q.add('dup', { n: 2 }, { jobId: 'travel:42', delay: 50 });
      await q.add('dup', { n: 3 }, { jobId: 'travel:42' });
      await waitFor(() => seen.length === 1, 'the first job');
      expect(seen[0]!.job).toMatchObject({ id: 'travel:42', data: { n: 1 } });
      // While running.
      await q.add('dup', { n: 4, hold: true }, { jobId: 'travel:43' });
      await waitFor(() => seen.length === 2, 'the held job');
      await q.add('dup', { n: 5 }, { jobId: 'travel:43' });
      await sleep(100);
      expect(seen).toHaveLength(2);
      release();
      // Once completed, the id is free again.
      await sleep(50);
      await q.add('dup', { n: 6 }, { jobId: 'travel:42' });
      await waitFor(() => seen.length === 3, 'the re-added job');
      expect(seen[2]!.job).toMatchObject({ id: 'travel:42', data: { n: 6 }, attempt: 1 });
    },
  },
  {
    name: 'retries a job that throws, with backoff, until it succeeds',
    async run({ backend, queue }) {
      const { seen, record } = recorder();
      const failures: { attempt: number; message: string }[] = [];
      backend.worker(
        queue,
        async (job) => {
          record(job);
          if (job.attempt < 3) throw new Error(`attempt ${job.attempt} fails`);
        },
        { onFailed: (job, error) => void failures.push({ attempt: job.attempt, message: error.message }) },
      );
      await backend.queue(queue).add('flaky', { x: 1 });
      await waitFor(() => seen.length === 3, 'three attempts');
      expect(seen.map((s) => s.job.attempt)).toEqual([1, 2, 3]);
      expect(seen.map((s) => s.job.data)).toEqual([{ x: 1 }, { x: 1 }, { x: 1 }]);
      expect(failures).toEqual([
        { attempt: 1, message: 'attempt 1 fails' },
        { attempt: 2, message: 'attempt 2 fails' },
      ]);
      // Backoff 100 ms then 200 ms (a little slack for timer rounding).
      expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(90);
      expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(190);
      await sleep(300);
      expect(seen).toHaveLength(3);
    },
  },
  {
    name: 'gives up after its attempts, calling onFailed after each, and frees the id',
    async run({ backend, queue }) {
      const { seen, record } = recorder();
      const failures: { id: string; attempt: number; message: string }[] = [];
      backend.worker(
        queue,
        async (job) => {
          record(job);
          if ((job.data as { ok?: boolean }).ok) return;
          throw new Error('always');
        },
        { onFailed: (job, error) => void failures.push({ id: job.id, attempt: job.attempt, message: error.message }) },
      );
      const q = backend.queue(queue);
      await q.add('doomed', {}, { attempts: 3, jobId: 'fence:1' });
      await waitFor(() => failures.length === 3, 'three failures');
      expect(failures).toEqual([1, 2, 3].map((attempt) => ({ id: 'fence:1', attempt, message: 'always' })));
      await sleep(500);
      expect(seen).toHaveLength(3);
      // A job given up no longer blocks its id.
      await q.add('doomed', { ok: true }, { attempts: 3, jobId: 'fence:1' });
      await waitFor(() => seen.length === 4, 'the re-added job');
      expect(seen[3]!.job).toMatchObject({ id: 'fence:1', attempt: 1, data: { ok: true } });
    },
  },
  {
    name: 'remove() cancels a delayed or waiting job, leaves a running one, ignores an unknown id',
    async run({ backend, queue }) {
      const q = backend.queue(queue);
      await q.add('start', {}, { jobId: 'travel:9:start', delay: 150 });
      await q.add('waiting', {}, { jobId: 'w-1' });
      await q.remove('travel:9:start');
      await q.remove('w-1');
      await q.remove('no-such-job');
      const { seen, record } = recorder();
      let release = () => {};
      const released = new Promise<void>((resolve) => (release = resolve));
      backend.worker(queue, async (job) => {
        record(job);
        if (job.name === 'held') await released;
      });
      await q.add('held', {}, { jobId: 'h-1' });
      await waitFor(() => seen.length === 1, 'the held job');
      await q.remove('h-1');
      release();
      await q.add('marker', {}, { delay: 250 });
      await waitFor(() => seen.length === 2, 'the marker job');
      await sleep(50);
      expect(seen.map((s) => s.job.name)).toEqual(['held', 'marker']);
    },
  },
  {
    name: 'repeat() fires every interval, and a second call for the same name keeps one schedule',
    async run({ backend, queue, sibling }) {
      const { seen, record } = recorder();
      backend.worker(queue, async (job) => void record(job));
      await backend.queue(queue).repeat('sweep', 100, { kind: 'sweep' });
      await sibling().queue(queue).repeat('sweep', 100, { kind: 'sweep' });
      await waitFor(() => seen.length >= 1, 'the first repeat');
      const start = seen.length;
      await sleep(1_000);
      const fires = seen.length - start;
      // ≈ 10; a doubled schedule would give ≈ 20. Wide bounds for a loaded machine.
      expect(fires).toBeGreaterThanOrEqual(4);
      expect(fires).toBeLessThanOrEqual(13);
      expect(seen[0]!.job).toMatchObject({ name: 'sweep', data: { kind: 'sweep' } });
    },
  },
  {
    name: 'repeat() again with another interval replaces the interval',
    async run({ backend, queue }) {
      const { seen, record } = recorder();
      backend.worker(queue, async (job) => void record(job));
      const q = backend.queue(queue);
      await q.repeat('tick', 40);
      await waitFor(() => seen.length >= 1, 'the first repeat');
      await q.repeat('tick', 400);
      await sleep(100);
      const start = seen.length;
      await sleep(900);
      // ≈ 2 at 400 ms; the old 40 ms interval would give ≈ 22.
      expect(seen.length - start).toBeLessThanOrEqual(4);
    },
  },
  {
    name: 'runs jobs side by side up to the concurrency, not beyond',
    async run({ backend, queue }) {
      for (const concurrency of [1, 2]) {
        const name = `${queue}-c${concurrency}`;
        const spans: { start: number; end: number }[] = [];
        const worker = backend.worker(
          name,
          async () => {
            const start = Date.now();
            await sleep(150);
            spans.push({ start, end: Date.now() });
          },
          { concurrency },
        );
        const q = backend.queue(name);
        await q.add('slow', {});
        await q.add('slow', {});
        await waitFor(() => spans.length === 2, `two jobs at concurrency ${concurrency}`);
        await worker.close();
        const [a, b] = spans.sort((x, y) => x.start - y.start) as [(typeof spans)[0], (typeof spans)[0]];
        if (concurrency === 2) expect(b.start).toBeLessThan(a.end);
        else expect(b.start).toBeGreaterThanOrEqual(a.end);
      }
    },
  },
  {
    name: 'keeps jobs added before any worker until one starts',
    async run({ backend, queue }) {
      await backend.queue(queue).add('early', { n: 1 });
      await backend.queue(queue).add('early-delayed', { n: 2 }, { delay: 20 });
      await sleep(150);
      const { seen, record } = recorder();
      backend.worker(queue, async (job) => void record(job));
      await waitFor(() => seen.length === 2, 'both jobs');
      expect(seen.map((s) => s.job.name)).toEqual(['early', 'early-delayed']);
    },
  },
  {
    name: 'worker close() waits for the running job and takes no new one',
    async run({ backend, queue }) {
      let started = 0;
      let finished = 0;
      const worker = backend.worker(queue, async () => {
        started += 1;
        await sleep(200);
        finished += 1;
      });
      const q = backend.queue(queue);
      await q.add('long', {});
      await waitFor(() => started === 1, 'the job to start');
      await worker.close();
      expect(finished).toBe(1);
      await q.add('after-close', {});
      await sleep(300);
      expect(started).toBe(1);
    },
  },
];

const inProcess: Harness = {
  open() {
    const backend = inProcessQueues();
    opened.push(backend);
    return { backend, queue: uniqueName(), sibling: () => backend };
  },
  async cleanup() {},
};

function bullmq(redisUrl: string): Harness {
  let prefix = '';
  return {
    open() {
      prefix = uniqueName();
      const backend = bullmqQueues(redisUrl, { prefix });
      opened.push(backend);
      return {
        backend,
        queue: uniqueName(),
        sibling() {
          const other = bullmqQueues(redisUrl, { prefix });
          opened.push(other);
          return other;
        },
      };
    },
    cleanup: () => deleteKeys(redisUrl, prefix),
  };
}

/** The same backend on a Redis Cluster: each queue's keys under a hash tag of their own. */
function bullmqOnCluster(target: () => RedisTarget): Harness {
  let prefix = '';
  return {
    open() {
      prefix = uniqueName();
      const backend = bullmqQueues(target(), { prefix });
      opened.push(backend);
      return {
        backend,
        queue: uniqueName(),
        sibling() {
          const other = bullmqQueues(target(), { prefix });
          opened.push(other);
          return other;
        },
      };
    },
    cleanup: () => deleteRedisPrefix(target(), prefix),
  };
}

async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: `${prefix}:*`, count: 500 })) keys.push(...(batch as string[]));
    if (keys.length > 0) await redis.unlink(...keys);
  } finally {
    await redis.quit();
  }
}

const opened: QueueBackend[] = [];
let current: Harness | undefined;

afterEach(async () => {
  await Promise.all(opened.splice(0).map((b) => b.close()));
  await current?.cleanup();
  current = undefined;
});

function describeBehaviours(harness: Harness) {
  for (const behaviour of behaviours) {
    it(behaviour.name, async () => {
      current = harness;
      await behaviour.run(harness.open());
    });
  }
}

describe('in-process queue backend', () => describeBehaviours(inProcess));

const redisUrl = process.env.REDIS_URL;
if (redisUrl) {
  describe(`bullmq queue backend (${redisUrl})`, () => describeBehaviours(bullmq(redisUrl)));

  describe(`bullmq schedules when Redis loses its data (${redisUrl})`, () => {
    // A Redis restarted without persistence holds nothing of the prefix: deleting its keys is that
    // restart as this process sees it, without disturbing the other suites sharing the server.
    it('makes a lost repeat() schedule again, which fires again', async () => {
      const prefix = uniqueName();
      const queue = uniqueName();
      const restored: string[] = [];
      const backend = bullmqQueues(redisUrl, { prefix, scheduleCheckMs: 100, onScheduleRestored: (q, job) => restored.push(`${q} ${job}`) });
      opened.push(backend);
      try {
        const { seen, record } = recorder();
        backend.worker(queue, async (job) => void record(job));
        await backend.queue(queue).repeat('sweep', 200, { kind: 'sweep' });
        await waitFor(() => seen.length >= 1, 'the first repeat');
        await deleteKeys(redisUrl, prefix);
        const lostAt = Date.now();
        await waitFor(() => seen.some((s) => s.at > lostAt + 300), 'a repeat after the loss', 10_000);
        expect(restored).toEqual([`${queue} sweep`]);
        expect(seen.at(-1)!.job).toMatchObject({ name: 'sweep', data: { kind: 'sweep' } });
      } finally {
        await backend.close();
        await deleteKeys(redisUrl, prefix);
      }
    });
  });
} else {
  describe.skip('bullmq queue backend (skipped: set REDIS_URL to run it against Redis)', () => {
    it('needs REDIS_URL', () => {});
  });
}

const redisServerInstalled = spawnSync('redis-server', ['--version']).status === 0;
describe.skipIf(!redisServerInstalled)(`bullmq queue backend on a 3-master Redis Cluster${redisServerInstalled ? '' : ' (skipped: redis-server is not installed)'}`, () => {
  const cluster = new RedisClusterProcess(3);
  beforeAll(() => cluster.start(), 60_000);
  afterAll(() => cluster.stop());
  describeBehaviours(bullmqOnCluster(() => ({ cluster: cluster.settings })));
});

describe('bullmq job ids', () => {
  it.each(['travel:42', '42', '%3A', 'a%b:c', '%i7', 'plain-id'])('maps %s to a valid id and back', (id) => {
    const mapped = toBullmqId(id);
    expect(mapped).not.toContain(':');
    expect(`${parseInt(mapped, 10)}`).not.toBe(mapped);
    expect(fromBullmqId(mapped)).toBe(id);
  });

  it('never maps two ids to one', () => {
    const ids = ['a:b', 'a%3Ab', 'a%253Ab', '7', '%i7', '%25i7'];
    expect(new Set(ids.map(toBullmqId)).size).toBe(ids.length);
  });
});
