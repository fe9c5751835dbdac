import { describe, expect, it } from 'vitest';
import { createLogger } from '../runtime/logger.ts';
import { EngineLag, engineMetrics } from './engine-metrics.ts';
import { observedJob } from './observed-job.ts';

const countOf = async (job: string, outcome: string) =>
  (await engineMetrics.jobs.get()).values.find((v) => v.labels.name === job && v.labels.outcome === outcome)?.value ?? 0;

describe('observedJob', () => {
  it('gives every line of a job its name, id and the request id that queued it, and counts the outcome', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger('debug', (line) => void lines.push(JSON.parse(line)));
    const lag = new EngineLag();
    const before = await countOf('travel-start', 'completed');
    await observedJob(log, lag, async (_job, jobLog) => jobLog.info('travel started'))({
      id: 'travel-start-7', name: 'travel-start', data: { travelId: 7, requestId: 'req-1' }, attempt: 1,
    });
    expect(lines).toEqual([expect.objectContaining({ msg: 'travel started', job: 'travel-start', jobId: 'travel-start-7', attempt: 1, requestId: 'req-1' })]);
    expect(await countOf('travel-start', 'completed')).toBe(before + 1);
    lag.close();
  });

  it('names a job without a request of its own after its id, and counts a failure before rethrowing it', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger('debug', (line) => void lines.push(JSON.parse(line)));
    const lag = new EngineLag();
    const before = await countOf('prune', 'failed');
    const failing = observedJob(log, lag, async () => {
      throw new Error('database gone');
    });
    await expect(failing({ id: 'repeat:prune:1', name: 'prune', data: {}, attempt: 2 })).rejects.toThrow('database gone');
    expect(lines[0]).toMatchObject({ requestId: 'job-repeat:prune:1', attempt: 2, error: 'database gone' });
    expect(await countOf('prune', 'failed')).toBe(before + 1);
    lag.close();
  });

  it('measures the lag from the commit that signalled a devices job, and while one runs', async () => {
    const log = createLogger('silent');
    const lag = new EngineLag();
    let release!: () => void;
    const running = observedJob(log, lag, () => new Promise<void>((resolve) => (release = resolve)))({
      id: '1', name: 'devices', data: { deviceIds: [1], committedAt: Date.now() - 3_000 }, attempt: 1,
    });
    await new Promise((r) => setTimeout(r, 10));
    // Still running: the lag is at least how long ago its fixes were committed.
    expect(lag.seconds).toBeGreaterThanOrEqual(3);
    release();
    await running;
    expect(lag.seconds).toBeGreaterThanOrEqual(3);
    await observedJob(log, lag, async () => undefined)({ id: '2', name: 'devices', data: { deviceIds: [1], committedAt: Date.now() }, attempt: 1 });
    expect(lag.seconds).toBeLessThan(1);
    lag.close();
  });
});
