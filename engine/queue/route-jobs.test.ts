import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { deleteRedisKeys } from '../../test/support/redis-keys.ts';
import { silentLogger } from '../../runtime/logger.ts';
import { bullmqQueues } from './bullmq-queues.ts';
import { inProcessQueues } from './in-process-queue.ts';
import { queueName, type Job, type QueueBackend } from './job-queue.ts';
import { routeJobs, type JobsOf, type PayloadsOf } from './route-jobs.ts';
import { UnrecoverableJobError } from './unrecoverable-job-error.ts';

const JOBS = {
  devices: z.object({ deviceIds: z.array(z.number().int()), requestId: z.string().optional() }),
  prune: z.object({}),
};
type TestJob = JobsOf<PayloadsOf<typeof JOBS>>;

const job = (name: string, data: unknown): Job => ({ id: '7', name, data, attempt: 1 });

function recordingRouter() {
  const seen: unknown[] = [];
  const run = routeJobs('test-queue', JOBS, {
    devices: async (data) => void seen.push(data),
    prune: async (data) => void seen.push(data),
  });
  return { seen, run };
}

describe('routeJobs', () => {
  it('hands each job its name’s processor with the payload checked', async () => {
    const { seen, run } = recordingRouter();
    await run(job('devices', { deviceIds: [1, 2], requestId: 'req-1' }), silentLogger);
    await run(job('prune', {}), silentLogger);
    expect(seen).toEqual([{ deviceIds: [1, 2], requestId: 'req-1' }, {}]);
  });

  it.each([
    ['a name the queue does not have', job('device', { deviceIds: [1] }), /Job 'device' \(id 7\) is not a job of queue 'test-queue', whose jobs are devices, prune/],
    ['a payload without a field', job('devices', {}), /Job 'devices' \(id 7\) has data that is not a 'devices' payload \(data\.deviceIds: /],
    ['a field of another type', job('devices', { deviceIds: ['1'] }), /data\.deviceIds\.0: /],
    ['no payload at all', job('prune', null), /Job 'prune' \(id 7\) has data that is not a 'prune' payload/],
  ])('fails %s at once, saying what is wrong, without calling a processor', async (_, bad, message) => {
    const { seen, run } = recordingRouter();
    const failure = run(bad, silentLogger);
    await expect(failure).rejects.toBeInstanceOf(UnrecoverableJobError);
    await expect(failure).rejects.toThrow(message);
    expect(seen).toEqual([]);
  });
});

/** A backend of the test's own: BullMQ with a unique prefix when REDIS_URL is set, in-process otherwise. */
const backends: Array<[string, () => { backend: QueueBackend; cleanup: () => Promise<void> }]> = [
  ['in-process', () => ({ backend: inProcessQueues(), cleanup: async () => {} })],
];
if (process.env.REDIS_URL) {
  const redisUrl = process.env.REDIS_URL;
  backends.push(['bullmq', () => {
    const prefix = `fc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
    return { backend: bullmqQueues(redisUrl, { prefix }), cleanup: () => deleteRedisKeys(prefix) };
  }]);
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe.each(backends)('a job with bad data on the %s backend', (_, open) => {
  it('fails once and is not retried, while a good job of the same queue runs', async () => {
    const { backend, cleanup } = open();
    cleanups.push(async () => {
      await backend.close();
      await cleanup();
    });
    const untyped = `fc-route-${randomBytes(4).toString('hex')}`;
    const name = queueName<TestJob>(untyped);
    const { seen, run } = recordingRouter();
    const failures: Array<{ attempt: number; message: string }> = [];
    backend.worker(name, (j) => run(j, silentLogger), { onFailed: (j, error) => void failures.push({ attempt: j.attempt, message: error.message }) });
    // Written by another version, or by hand: the untyped view of the same queue takes anything.
    await backend.queue(untyped).add('devices', { deviceIds: 'all' });
    await backend.queue(name).add('devices', { deviceIds: [3] });
    const deadline = Date.now() + 5_000;
    while ((failures.length < 1 || seen.length < 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    // Long enough for the first two retries (100 ms, 200 ms), had there been any.
    await new Promise((r) => setTimeout(r, 400));
    expect(seen).toEqual([{ deviceIds: [3] }]);
    expect(failures).toEqual([{ attempt: 1, message: expect.stringContaining("Job 'devices' (id 1) has data that is not a 'devices' payload") }]);
    expect(await backend.queue(name).counts()).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
  });
});
