import { describe, expect, it } from 'vitest';
import { CoalescedRun } from './coalesced-run.ts';

/** A task whose every run waits until the test lets it finish, with the outcome the test gives. */
function gatedTask() {
  const pending: Array<(error?: Error) => void> = [];
  let runs = 0;
  const task = () => {
    runs++;
    return new Promise<void>((resolve, reject) => pending.push((error) => (error ? reject(error) : resolve())));
  };
  const finish = async (error?: Error) => {
    pending.shift()!(error);
    await new Promise((r) => setImmediate(r));
  };
  return { task, finish, runs: () => runs, waiting: () => pending.length };
}

describe('CoalescedRun', () => {
  it('runs once more after the run under way however many requests came meanwhile, and not again', async () => {
    const t = gatedTask();
    const run = new CoalescedRun(t.task, { failed: () => undefined });
    run.request();
    run.request();
    run.request();
    expect(t.runs()).toBe(1);
    await t.finish();
    expect(t.runs()).toBe(2);
    await t.finish();
    expect(t.runs()).toBe(2);
    expect(t.waiting()).toBe(0);
  });

  it('reports a failure once until a run succeeds, then the recovery, and retries at the next request', async () => {
    const t = gatedTask();
    const said: string[] = [];
    const run = new CoalescedRun(t.task, { failed: (e) => said.push(`failed: ${e.message}`), recovered: () => said.push('recovered') });
    run.request();
    await t.finish(new Error('down'));
    run.request();
    await t.finish(new Error('still down'));
    run.request();
    await t.finish();
    expect(said).toEqual(['failed: down', 'recovered']);
  });

  it('starts nothing once closed, and its close waits for the run under way', async () => {
    const t = gatedTask();
    const run = new CoalescedRun(t.task, { failed: () => undefined });
    run.request();
    run.request();
    let closed = false;
    const closing = run.close().then(() => (closed = true));
    await new Promise((r) => setImmediate(r));
    expect(closed).toBe(false);
    await t.finish();
    await closing;
    run.request();
    expect(t.runs()).toBe(1);
  });
});
